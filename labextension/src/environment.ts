/**
 * The "Check environment" dialog's body: the environment model as one sentence and a table.
 */
import { el, formatBytes } from './bars';
import { IEnvironmentModel } from './models';

/** The environment model as a table; its first line (reason_text) names the mode and why, once. */
export function renderEnvironment(env: IEnvironmentModel): HTMLElement {
  const box = el('div', 'gdk-environment');
  const headline = el('p', `gdk-env-mode gdk-env-${env.mode}`, env.reason_text);
  headline.dataset.reason = env.reason;
  box.appendChild(headline);
  const table = el('table', 'gdk-env-table');
  const add = (k: string, v: string) => {
    const tr = el('tr');
    tr.appendChild(el('th', '', k));
    tr.appendChild(el('td', '', v));
    table.appendChild(tr);
  };
  for (const g of env.gpus) {
    const memory = `${formatBytes(g.memory_free)} free of ${formatBytes(g.memory_total)}`;
    add(`GPU ${g.index}`, `${g.name} · ${memory}`);
  }
  add('Driver', env.driver_version || '—');
  add('CUDA', env.cuda_version || '—');
  add('Python', env.python);
  add('Platform', env.platform);
  const percent = (f: number) => `${Math.round(f * 100)}%`;
  add(
    'Memory warning',
    `from ${percent(env.memory_warn)} of a limit, critical from ${percent(env.memory_critical)}`
  );
  for (const name of Object.keys(env.libraries).sort()) {
    const lib = env.libraries[name];
    const state = lib.installed ? lib.version || 'installed' : 'not installed';
    add(name, lib.error ? `${state} (${lib.error})` : state);
  }
  box.appendChild(table);
  return box;
}
