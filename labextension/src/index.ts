/**
 * gpu-dask-kit for JupyterLab 4: the "GPU Dask" sidebar, a Launcher card for the workshop and
 * palette commands.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { GpuDaskPanel } from './panel';
import { SidebarModel } from './sidebarmodel';
import { openWorkshop } from './workshop';

const PLUGIN_ID = 'gpu-dask-kit:plugin';

/** Command ids (palette, launcher and tests use these). */
export namespace CommandIDs {
  export const openWorkshop = 'gpu-dask-kit:open-workshop';
  export const checkEnvironment = 'gpu-dask-kit:check-environment';
  export const showSidebar = 'gpu-dask-kit:show-sidebar';
  export const refresh = 'gpu-dask-kit:refresh';
}

/** dask-labextension's commands and sidebar, used when that extension is installed. */
const DASK_POPULATE_URL = 'dask:populate-dashboard-url';
const DASK_SIDEBAR_ID = 'dask-dashboard-launcher';

export const gpuDaskIcon = new LabIcon({
  name: 'gpu-dask-kit:icon',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    // the chip's outline is a filled ring, so the theme's .jp-icon3[fill] colours all of it
    '<path fill-rule="evenodd" d="M7 5h10a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2zm0 2v10h10V7z"/>' +
    '<rect x="9" y="9" width="6" height="6"/>' +
    '<rect x="8" y="1" width="2" height="4"/><rect x="14" y="1" width="2" height="4"/>' +
    '<rect x="8" y="19" width="2" height="4"/><rect x="14" y="19" width="2" height="4"/>' +
    '<rect x="1" y="8" width="4" height="2"/><rect x="1" y="14" width="4" height="2"/>' +
    '<rect x="19" y="8" width="4" height="2"/><rect x="19" y="14" width="4" height="2"/>' +
    '</g></svg>'
});

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'GPU Dask sidebar, workshop launcher and commands.',
  autoStart: true,
  optional: [ILauncher, ICommandPalette, ISettingRegistry, ILayoutRestorer],
  activate: async (
    app: JupyterFrontEnd,
    launcher: ILauncher | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new SidebarModel();
    let workshopSetting = '';
    if (settingRegistry) {
      try {
        const settings = await settingRegistry.load(PLUGIN_ID);
        // read now and on every change: new poll intervals take effect at once, no reload
        const apply = () => {
          workshopSetting = (settings.get('workshopNotebook').composite as string) || '';
          model.intervals = {
            gpus: (settings.get('gpuRefreshSeconds').composite as number) * 1000,
            sessions: (settings.get('sessionsRefreshSeconds').composite as number) * 1000
          };
        };
        apply();
        settings.changed.connect(apply);
      } catch (error) {
        console.warn('gpu-dask-kit: could not load settings', error);
      }
    }
    model.loadEnvironment().catch(error => {
      console.warn('gpu-dask-kit: could not read the environment model', error);
    });

    const panel = new GpuDaskPanel({
      model,
      openWorkshop: async () => {
        await openWorkshop(app, workshopSetting);
      },
      hasDaskPane: () => app.commands.hasCommand(DASK_POPULATE_URL),
      openInDaskPane: async (url: string) => {
        await app.commands.execute(DASK_POPULATE_URL, { url });
        app.shell.activateById(DASK_SIDEBAR_ID);
      }
    });
    panel.title.icon = gpuDaskIcon;
    app.shell.add(panel, 'left', { rank: 250 });
    if (restorer) {
      restorer.add(panel, panel.id);
    }

    app.commands.addCommand(CommandIDs.openWorkshop, {
      label: args => (args.isLauncher ? 'GPU Dask workshop' : 'Open GPU Dask Workshop'),
      caption: "Open the workshop's first notebook (00_start_here.ipynb)",
      icon: gpuDaskIcon,
      execute: () => openWorkshop(app, workshopSetting)
    });
    app.commands.addCommand(CommandIDs.checkEnvironment, {
      label: 'Check GPU Dask Environment',
      caption:
        'Show GPUs, driver, CUDA and library versions, and why the kit runs in GPU or CPU mode',
      execute: () => panel.checkEnvironment()
    });
    app.commands.addCommand(CommandIDs.showSidebar, {
      label: 'Show GPU Dask Sidebar',
      execute: () => app.shell.activateById(panel.id)
    });
    app.commands.addCommand(CommandIDs.refresh, {
      label: 'Refresh GPU Dask Sidebar',
      execute: () => panel.refresh()
    });

    if (launcher) {
      launcher.add({
        command: CommandIDs.openWorkshop,
        args: { isLauncher: true },
        category: 'Other',
        rank: 0
      });
    }
    if (palette) {
      const category = 'GPU Dask';
      for (const command of Object.values(CommandIDs)) {
        palette.addItem({ command, category });
      }
    }
  }
};

export default plugin;
