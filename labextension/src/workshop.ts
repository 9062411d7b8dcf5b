/**
 * Finding and opening the workshop's first notebook.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { showErrorMessage } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';

/** Tried in order when neither the lab setting nor the server names a notebook. */
export const DEFAULT_WORKSHOP_PATHS = ['00_start_here.ipynb', 'notebooks/00_start_here.ipynb'];

/** The page-config key the server extension fills from `c.GpuDaskKit.workshop_notebook`. */
export const PAGE_CONFIG_KEY = 'gpuDaskKitWorkshopNotebook';

/**
 * The candidate paths, relative to the server root: the user's lab setting, then the server's
 * setting, then the defaults. Empty strings are skipped and duplicates removed.
 */
export function workshopCandidates(labSetting: string): string[] {
  const server = PageConfig.getOption(PAGE_CONFIG_KEY);
  const all = [labSetting, server, ...DEFAULT_WORKSHOP_PATHS]
    .map(p => (p || '').trim().replace(/^\/+/, ''))
    .filter(p => p.length > 0);
  return all.filter((p, i) => all.indexOf(p) === i);
}

/** The first candidate that exists, checked with the contents API (no content transferred). */
export async function findWorkshop(
  app: JupyterFrontEnd,
  candidates: string[]
): Promise<string | null> {
  for (const path of candidates) {
    try {
      const model = await app.serviceManager.contents.get(path, { content: false });
      if (model.type === 'notebook' || model.type === 'file') {
        return path;
      }
    } catch {
      // 404: try the next one
    }
  }
  return null;
}

/** Open the workshop notebook, or explain which paths were tried. */
export async function openWorkshop(
  app: JupyterFrontEnd,
  labSetting: string
): Promise<string | null> {
  const candidates = workshopCandidates(labSetting);
  const path = await findWorkshop(app, candidates);
  if (path === null) {
    await showErrorMessage(
      'Workshop notebook not found',
      `None of these exist under the server root: ${candidates.join(', ')}. ` +
        'Start JupyterLab in the workshop folder (gpu-dask-kit lab), or set ' +
        '"Workshop notebook" in Settings > GPU Dask.'
    );
    return null;
  }
  await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
  return path;
}
