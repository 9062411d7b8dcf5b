/**
 * DOM rendering of the sidebar's parts: pure functions from a wire model to elements.
 */
import {
  IEnvironmentReport,
  IGPUSample,
  IGPUUse,
  IMemoryTotals,
  ISession
} from './models';

/** What a session row can do; the panel supplies the behaviour. */
export interface ISessionActions {
  dashboardUrl(session: ISession): string | null;
  canOpenInDaskPane: boolean;
  openInDaskPane(session: ISession): void;
  shutdown(session: ISession, button: HTMLButtonElement): void;
}

/** Human-readable bytes, e.g. `1.5 GiB`. */
export function formatBytes(value: number | null | undefined): string {
  if (value === null || value === undefined || !isFinite(value)) {
    return '?';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = value;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Create an element with a class and optional text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A labelled horizontal bar; `fraction` in [0, 1] or null when unknown. */
export function bar(label: string, fraction: number | null, detail: string): HTMLElement {
  const row = el('div', 'gdk-bar');
  row.appendChild(el('span', 'gdk-bar-label', label));
  const track = el('div', 'gdk-bar-track');
  const fill = el('div', 'gdk-bar-fill');
  const f = fraction === null ? 0 : Math.max(0, Math.min(1, fraction));
  fill.style.width = `${(f * 100).toFixed(1)}%`;
  if (f > 0.9) {
    fill.classList.add('gdk-mod-high');
  }
  track.appendChild(fill);
  row.appendChild(track);
  row.appendChild(el('span', 'gdk-bar-detail', detail));
  if (fraction !== null) {
    row.setAttribute('aria-valuenow', String(Math.round(f * 100)));
  }
  return row;
}

function gpuCard(gpu: IGPUUse): HTMLElement {
  const card = el('div', 'gdk-gpu-card');
  card.dataset.gpuIndex = String(gpu.index);
  card.appendChild(el('div', 'gdk-gpu-name', `GPU ${gpu.index}: ${gpu.name}`));
  const mem = gpu.memory_total > 0 ? gpu.memory_used / gpu.memory_total : null;
  card.appendChild(
    bar('Memory', mem, `${formatBytes(gpu.memory_used)} / ${formatBytes(gpu.memory_total)}`)
  );
  const util = gpu.utilization === null ? null : gpu.utilization / 100;
  card.appendChild(
    bar('Utilisation', util, gpu.utilization === null ? 'n/a' : `${gpu.utilization}%`)
  );
  return card;
}

/** The GPU section: one card per GPU, or the CPU-mode notice with its reason. */
export function renderGPUs(
  sample: IGPUSample | null,
  env: IEnvironmentReport | null
): HTMLElement {
  const box = el('div', 'gdk-gpus');
  if (sample === null) {
    box.appendChild(el('div', 'gdk-muted', 'Looking for GPUs…'));
    return box;
  }
  if (sample.gpus.length === 0) {
    const notice = el('div', 'gdk-cpu-mode');
    notice.appendChild(el('div', 'gdk-cpu-mode-title', 'No GPU: CPU mode'));
    const reason = sample.reason || (env && env.reason_text) || 'No GPU was found.';
    notice.appendChild(el('div', 'gdk-reason', reason));
    box.appendChild(notice);
    return box;
  }
  for (const gpu of sample.gpus) {
    box.appendChild(gpuCard(gpu));
  }
  if (env && env.mode === 'cpu') {
    box.appendChild(el('div', 'gdk-reason', env.reason_text));
  }
  return box;
}

function memoryLines(memory: IMemoryTotals): HTMLElement {
  const box = el('div', 'gdk-session-memory');
  const host = memory.host_memory_limit > 0 ? memory.host_memory_used / memory.host_memory_limit : null;
  box.appendChild(
    bar('Host', host, `${formatBytes(memory.host_memory_used)} / ${formatBytes(memory.host_memory_limit)}`)
  );
  if (memory.device_memory_limit > 0 || memory.device_memory_used > 0) {
    const dev = memory.device_memory_limit > 0 ? memory.device_memory_used / memory.device_memory_limit : null;
    box.appendChild(
      bar('Device', dev, `${formatBytes(memory.device_memory_used)} / ${formatBytes(memory.device_memory_limit)}`)
    );
  }
  const spilled = memory.spilled_to_host + memory.spilled_to_disk;
  if (spilled > 0) {
    box.appendChild(
      el('div', 'gdk-muted', `Spilled: ${formatBytes(memory.spilled_to_host)} to host, ${formatBytes(memory.spilled_to_disk)} to disk`)
    );
  }
  return box;
}

function sessionRow(session: ISession, actions: ISessionActions): HTMLElement {
  const row = el('li', 'gdk-session');
  row.dataset.sessionId = session.id;
  row.dataset.kind = session.kind;
  const head = el('div', 'gdk-session-head');
  const workers = session.memory ? session.memory.workers : session.n_workers;
  head.appendChild(
    el('span', 'gdk-session-title', `${session.backend.toUpperCase()} · ${workers} worker${workers === 1 ? '' : 's'}`)
  );
  head.appendChild(el('span', `gdk-kind gdk-kind-${session.kind}`, session.kind));
  if (session.stale) {
    const badge = el('span', 'gdk-stale', 'stale');
    badge.title = `The process that started this session (pid ${session.owner_pid}) has ended; shut it down to free its workers.`;
    head.appendChild(badge);
  }
  row.appendChild(head);
  row.appendChild(
    el('div', 'gdk-muted gdk-session-address', `${session.scheduler_address || 'no scheduler'} · pid ${session.owner_pid} · ${session.id.slice(0, 8)}`)
  );
  if (session.memory) {
    row.appendChild(memoryLines(session.memory));
  }
  const buttons = el('div', 'gdk-session-actions');
  const url = actions.dashboardUrl(session);
  if (url) {
    const link = el('a', 'gdk-dashboard-link', 'Dashboard');
    link.href = url;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    buttons.appendChild(link);
    if (actions.canOpenInDaskPane) {
      const pane = el('button', 'jp-Button jp-mod-styled gdk-open-pane', 'Open in Dask pane');
      pane.onclick = () => actions.openInDaskPane(session);
      buttons.appendChild(pane);
    }
  }
  const stop = el('button', 'jp-Button jp-mod-styled jp-mod-warn gdk-shutdown', 'Shut down');
  stop.title = session.kind === 'connect' ? 'Forget this connection (the scheduler is not the kit\'s to stop)' : 'Stop this cluster and its workers';
  stop.onclick = () => actions.shutdown(session, stop);
  buttons.appendChild(stop);
  row.appendChild(buttons);
  return row;
}

/** The sessions section: one row per session of this user, or a hint. */
export function renderSessions(sessions: ISession[] | null, actions: ISessionActions): HTMLElement {
  const box = el('div', 'gdk-sessions');
  if (sessions === null) {
    box.appendChild(el('div', 'gdk-muted', 'Loading sessions…'));
    return box;
  }
  if (sessions.length === 0) {
    box.appendChild(
      el('div', 'gdk-muted gdk-no-sessions', 'No cluster running. Start one in a notebook with gpu_dask_kit.start_cluster() or with the Dask pane\'s "+ NEW".')
    );
    return box;
  }
  const list = el('ul', 'gdk-session-list');
  for (const s of sessions) {
    list.appendChild(sessionRow(s, actions));
  }
  box.appendChild(list);
  return box;
}

/** The environment report as a table, for the "Check environment" dialog. */
export function renderEnvironment(env: IEnvironmentReport): HTMLElement {
  const box = el('div', 'gdk-environment');
  box.appendChild(el('p', `gdk-env-mode gdk-env-${env.mode}`, `Mode: ${env.mode.toUpperCase()} (${env.reason})`));
  box.appendChild(el('p', 'gdk-reason', env.reason_text));
  const table = el('table', 'gdk-env-table');
  const add = (k: string, v: string) => {
    const tr = el('tr');
    tr.appendChild(el('th', '', k));
    tr.appendChild(el('td', '', v));
    table.appendChild(tr);
  };
  for (const g of env.gpus) {
    add(`GPU ${g.index}`, `${g.name} · ${formatBytes(g.memory_free)} free of ${formatBytes(g.memory_total)}`);
  }
  add('Driver', env.driver_version || '—');
  add('CUDA', env.cuda_version || '—');
  add('Python', env.python);
  add('Platform', env.platform);
  for (const name of Object.keys(env.libraries).sort()) {
    const lib = env.libraries[name];
    const state = lib.installed ? lib.version || 'installed' : 'not installed';
    add(name, lib.error ? `${state} (${lib.error})` : state);
  }
  box.appendChild(table);
  return box;
}
