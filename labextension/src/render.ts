/**
 * DOM rendering of the sidebar's sections: pure functions from wire models to elements.
 */
import { bar, el, formatBytes, IThresholds } from './bars';
import { IEnvironmentModel, IGPUSample, IGPUUse, IMemoryTotals, ISessionModel } from './models';

/** What a session row can do; the view supplies the behaviour. */
export interface ISessionActions {
  dashboardUrl(session: ISessionModel): string | null;
  canOpenInDaskPane: boolean;
  openInDaskPane(session: ISessionModel): void;
  shutdown(session: ISessionModel): void;
  /** Whether a shutdown of this session is under way. */
  isStopping(session: ISessionModel): boolean;
}

/** The no-GPU notice: a title and one sentence, saying "CPU mode" once. */
export function cpuModeText(
  sample: IGPUSample,
  env: IEnvironmentModel | null
): { title: string; detail: string } {
  const detail = (sample.reason || (env && env.reason_text) || 'No GPU was found.').trim();
  if (/cpu mode/i.test(detail)) {
    return { title: 'No GPU', detail };
  }
  return { title: 'No GPU: CPU mode', detail: detail.charAt(0).toUpperCase() + detail.slice(1) };
}

function fraction(used: number, limit: number): number | null {
  return limit > 0 ? used / limit : null;
}

function gpuCard(gpu: IGPUUse, thresholds: IThresholds | null): HTMLElement {
  const card = el('div', 'gdk-gpu-card');
  card.dataset.gpuIndex = String(gpu.index);
  card.appendChild(el('div', 'gdk-gpu-name', `GPU ${gpu.index}: ${gpu.name}`));
  card.appendChild(
    bar({
      label: 'Memory',
      name: `GPU ${gpu.index} memory`,
      fraction: fraction(gpu.memory_used, gpu.memory_total),
      detail: `${formatBytes(gpu.memory_used)} / ${formatBytes(gpu.memory_total)}`,
      thresholds
    })
  );
  const util = gpu.utilization;
  card.appendChild(
    bar({
      label: 'Utilisation',
      name: `GPU ${gpu.index} utilisation`,
      fraction: util === null ? null : util / 100,
      detail: util === null ? 'n/a' : `${util}%`,
      thresholds: null
    })
  );
  return card;
}

/** The GPU section: one card per GPU, or the CPU-mode notice with its reason. */
export function renderGPUs(
  sample: IGPUSample | null,
  env: IEnvironmentModel | null,
  thresholds: IThresholds | null
): HTMLElement {
  const box = el('div', 'gdk-gpus');
  if (sample === null) {
    box.appendChild(el('div', 'gdk-muted', 'Looking for GPUs…'));
    return box;
  }
  if (sample.gpus.length === 0) {
    const { title, detail } = cpuModeText(sample, env);
    const notice = el('div', 'gdk-cpu-mode');
    notice.setAttribute('role', 'status');
    notice.appendChild(el('div', 'gdk-cpu-mode-title', title));
    notice.appendChild(el('div', 'gdk-reason', detail));
    box.appendChild(notice);
    return box;
  }
  for (const gpu of sample.gpus) {
    box.appendChild(gpuCard(gpu, thresholds));
  }
  if (env && env.mode === 'cpu') {
    box.appendChild(el('div', 'gdk-reason', env.reason_text));
  }
  return box;
}

/** RMM in use, RMM pool and NVML's whole-GPU figure, each named (empty when none is known). */
export function deviceLine(memory: IMemoryTotals): string {
  const parts: string[] = [];
  if (memory.rmm_used !== null) {
    parts.push(`RMM in use ${formatBytes(memory.rmm_used)}`);
  }
  if (memory.rmm_pool_size !== null) {
    parts.push(`RMM pool ${formatBytes(memory.rmm_pool_size)}`);
  }
  if (memory.gpu_total_in_use !== null) {
    const total = memory.device_memory_total;
    const of = total ? ` of ${formatBytes(total)}` : '';
    parts.push(`GPU total in use (all processes) ${formatBytes(memory.gpu_total_in_use)}${of}`);
  }
  return parts.join(' · ');
}

function memoryLines(
  memory: IMemoryTotals,
  who: string,
  thresholds: IThresholds | null
): HTMLElement {
  const box = el('div', 'gdk-session-memory');
  box.appendChild(
    bar({
      label: 'Host',
      name: `${who} host memory`,
      fraction: fraction(memory.host_memory_used, memory.host_memory_limit),
      detail: `${formatBytes(memory.host_memory_used)} / ${formatBytes(memory.host_memory_limit)}`,
      thresholds
    })
  );
  if (memory.device_data !== null) {
    const limit = memory.device_memory_limit;
    box.appendChild(
      bar({
        label: 'GPU data',
        name: `${who} data in device memory`,
        fraction: limit ? fraction(memory.device_data, limit) : null,
        detail: limit
          ? `${formatBytes(memory.device_data)} / spill at ${formatBytes(limit)}`
          : `${formatBytes(memory.device_data)} (no spill limit)`,
        thresholds
      })
    );
  }
  const gpuLine = deviceLine(memory);
  if (gpuLine) {
    box.appendChild(el('div', 'gdk-muted gdk-device-figures', gpuLine));
  }
  if (memory.spilled_to_host + memory.spilled_to_disk > 0) {
    const host = formatBytes(memory.spilled_to_host);
    const disk = formatBytes(memory.spilled_to_disk);
    box.appendChild(el('div', 'gdk-muted', `Spilled: ${host} to host, ${disk} to disk`));
  }
  return box;
}

function sessionButtons(session: ISessionModel, actions: ISessionActions): HTMLElement {
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
  const stopping = actions.isStopping(session);
  const stop = el(
    'button',
    'jp-Button jp-mod-styled jp-mod-warn gdk-shutdown',
    stopping ? 'Shutting down…' : 'Shut down'
  );
  stop.disabled = stopping;
  stop.title =
    session.started_by === 'connect'
      ? "Forget this connection (the scheduler is not the kit's to stop)"
      : session.slurm_job_name
        ? 'Stop this cluster and cancel its SLURM jobs'
        : 'Stop this cluster and its workers';
  stop.onclick = () => actions.shutdown(session);
  buttons.appendChild(stop);
  return buttons;
}

function sessionRow(
  session: ISessionModel,
  actions: ISessionActions,
  thresholds: IThresholds | null
): HTMLElement {
  const row = el('li', 'gdk-session');
  row.dataset.sessionId = session.id;
  row.dataset.startedBy = session.started_by;
  const head = el('div', 'gdk-session-head');
  const workers = session.memory ? session.memory.workers : session.n_workers;
  const title = `${session.mode.toUpperCase()} · ${workers} worker${workers === 1 ? '' : 's'}`;
  head.appendChild(el('span', 'gdk-session-title', title));
  head.appendChild(
    el('span', `gdk-started-by gdk-started-by-${session.started_by}`, session.started_by)
  );
  if (session.stale) {
    const badge = el('span', 'gdk-stale', 'stale');
    badge.title =
      `The process that started this session (pid ${session.owner_pid}) has ended; ` +
      'shut it down to free its workers.';
    head.appendChild(badge);
  }
  row.appendChild(head);
  const short = session.id.slice(0, 8);
  const address = session.scheduler_address || 'no scheduler';
  row.appendChild(
    el('div', 'gdk-muted gdk-session-address', `${address} · pid ${session.owner_pid} · ${short}`)
  );
  if (session.slurm_job_name) {
    const ids = session.slurm_job_ids.length ? session.slurm_job_ids.join(', ') : 'none';
    row.appendChild(
      el('div', 'gdk-muted gdk-slurm-jobs', `SLURM jobs (${session.slurm_job_name}): ${ids}`)
    );
  }
  if (session.memory) {
    row.appendChild(memoryLines(session.memory, `Session ${short}`, thresholds));
  }
  row.appendChild(sessionButtons(session, actions));
  return row;
}

/** The sessions section: one row per session of this user, or a hint. */
export function renderSessions(
  sessions: ISessionModel[] | null,
  actions: ISessionActions,
  thresholds: IThresholds | null
): HTMLElement {
  const box = el('div', 'gdk-sessions');
  if (sessions === null) {
    box.appendChild(el('div', 'gdk-muted', 'Loading sessions…'));
    return box;
  }
  if (sessions.length === 0) {
    box.appendChild(
      el(
        'div',
        'gdk-muted gdk-no-sessions',
        'No cluster running. Start one in a notebook with gpu_dask_kit.start_cluster() ' +
          'or with the Dask pane\'s "+ NEW".'
      )
    );
    return box;
  }
  const list = el('ul', 'gdk-session-list');
  for (const s of sessions) {
    list.appendChild(sessionRow(s, actions, thresholds));
  }
  box.appendChild(list);
  return box;
}
