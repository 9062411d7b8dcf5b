/**
 * The "GPU Dask" left sidebar: GPUs, this user's sessions, and the two entry buttons.
 */
import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';
import { Poll } from '@lumino/polling';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { requestAPI, serverUrl } from './api';
import { IEnvironmentReport, IGPUSample, ISession, ISessionsReply } from './models';
import { el, renderEnvironment, renderGPUs, renderSessions, ISessionActions } from './render';

/** What the panel needs from the application. */
export interface IPanelOptions {
  openWorkshop(): Promise<void>;
  /** Whether dask-labextension's pane is there to show a dashboard in. */
  hasDaskPane(): boolean;
  /** Show a dashboard URL in dask-labextension's pane. */
  openInDaskPane(url: string): Promise<void>;
  gpuInterval?: number;
  sessionsInterval?: number;
}

/** Poll frequency: `interval` while things work, backing off up to a minute on errors. */
function frequency(interval: number) {
  return { interval, backoff: true, max: 60 * 1000 };
}

export class GpuDaskPanel extends Widget {
  constructor(options: IPanelOptions) {
    super();
    this._options = options;
    this.id = 'gpu-dask-kit-sidebar';
    this.addClass('gdk-panel');
    this.title.caption = 'GPU Dask';
    this._settings = ServerConnection.makeSettings();

    const header = el('div', 'gdk-header');
    header.appendChild(el('h2', 'gdk-title', 'GPU Dask'));
    const buttons = el('div', 'gdk-header-buttons');
    const check = el('button', 'jp-Button jp-mod-styled gdk-check-env', 'Check environment');
    check.onclick = () => void this.checkEnvironment();
    const workshop = el('button', 'jp-Button jp-mod-styled jp-mod-accept gdk-open-workshop', 'Open workshop');
    workshop.onclick = () => void this._options.openWorkshop();
    buttons.appendChild(check);
    buttons.appendChild(workshop);
    header.appendChild(buttons);
    this.node.appendChild(header);

    this.node.appendChild(el('h3', 'gdk-section-title', 'GPUs'));
    this._gpuNode = this.node.appendChild(el('div', 'gdk-gpu-section'));
    this.node.appendChild(el('h3', 'gdk-section-title', 'Sessions'));
    this._sessionsNode = this.node.appendChild(el('div', 'gdk-sessions-section'));
    this._errorNode = this.node.appendChild(el('div', 'gdk-error'));
    this._render();

    const standby = () => (this.isVisible ? 'when-hidden' : true);
    this._gpuPoll = new Poll({
      name: 'gpu-dask-kit:gpus',
      factory: () => this._refreshGPUs(),
      frequency: frequency(options.gpuInterval ?? 2000),
      standby
    });
    this._sessionsPoll = new Poll({
      name: 'gpu-dask-kit:sessions',
      factory: () => this._refreshSessions(),
      frequency: frequency(options.sessionsInterval ?? 2000),
      standby
    });
    void this._loadEnvironment();
  }

  /** Re-read everything now (after a change the user made). */
  async refresh(): Promise<void> {
    await Promise.all([this._gpuPoll.refresh(), this._sessionsPoll.refresh()]);
  }

  /** Fetch the environment report and show it in a dialog. */
  async checkEnvironment(): Promise<void> {
    try {
      const env = await requestAPI<IEnvironmentReport>('environment', {}, this._settings);
      this._env = env;
      this._render();
      const body = new Widget({ node: renderEnvironment(env) });
      await showDialog({
        title: 'gpu-dask-kit environment',
        body,
        buttons: [Dialog.okButton({ label: 'Close' })]
      });
    } catch (error) {
      await showErrorMessage('Could not check the environment', error as Error);
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._gpuPoll.dispose();
    this._sessionsPoll.dispose();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
  }

  private async _loadEnvironment(): Promise<void> {
    try {
      this._env = await requestAPI<IEnvironmentReport>('environment', {}, this._settings);
      this._render();
    } catch (error) {
      console.warn('gpu-dask-kit: could not read the environment report', error);
    }
  }

  private async _refreshGPUs(): Promise<void> {
    try {
      this._gpus = await requestAPI<IGPUSample>('gpus', {}, this._settings);
      this._setError('gpus', null);
    } catch (error) {
      this._setError('gpus', `GPUs: ${(error as Error).message}`);
      throw error; // lets the Poll back off
    } finally {
      this._render();
    }
  }

  private async _refreshSessions(): Promise<void> {
    try {
      const reply = await requestAPI<ISessionsReply>('sessions', {}, this._settings);
      this._sessions = reply.sessions;
      this._setError('sessions', null);
    } catch (error) {
      this._setError('sessions', `Sessions: ${(error as Error).message}`);
      throw error;
    } finally {
      this._render();
    }
  }

  private _setError(source: string, message: string | null): void {
    if (message === null) {
      delete this._errors[source];
    } else {
      this._errors[source] = message;
    }
  }

  private async _shutdown(session: ISession, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    button.textContent = 'Shutting down…';
    this._stopping.add(session.id);
    try {
      await requestAPI<void>(`sessions/${encodeURIComponent(session.id)}`, { method: 'DELETE' }, this._settings);
    } catch (error) {
      await showErrorMessage('Could not shut the session down', error as Error);
    } finally {
      this._stopping.delete(session.id);
      await this._sessionsPoll.refresh();
    }
  }

  private _actions(): ISessionActions {
    return {
      dashboardUrl: (s: ISession) => this._dashboardUrl(s),
      canOpenInDaskPane: this._options.hasDaskPane(),
      openInDaskPane: (s: ISession) => {
        const url = this._dashboardUrl(s, false);
        if (url) {
          void this._options.openInDaskPane(url);
        }
      },
      shutdown: (s: ISession, b: HTMLButtonElement) => void this._shutdown(s, b)
    };
  }

  /** The dashboard URL built from the server's base URL when it is proxied, else the raw link. */
  private _dashboardUrl(session: ISession, status = true): string | null {
    if (session.dashboard_path) {
      const path = status ? session.dashboard_path : session.dashboard_path.replace(/\/status\/?$/, '');
      return serverUrl(path, this._settings);
    }
    if (session.dashboard_link) {
      return status ? session.dashboard_link : session.dashboard_link.replace(/\/status\/?$/, '');
    }
    return null;
  }

  private _render(): void {
    this._gpuNode.replaceChildren(renderGPUs(this._gpus, this._env));
    this._sessionsNode.replaceChildren(renderSessions(this._sessions, this._actions()));
    for (const id of this._stopping) {
      const button = this._sessionsNode.querySelector<HTMLButtonElement>(`[data-session-id="${id}"] .gdk-shutdown`);
      if (button) {
        button.disabled = true;
        button.textContent = 'Shutting down…';
      }
    }
    const errors = Object.values(this._errors);
    this._errorNode.textContent = errors.join(' · ');
    this._errorNode.style.display = errors.length ? '' : 'none';
  }

  private _options: IPanelOptions;
  private _settings: ServerConnection.ISettings;
  private _gpuNode: HTMLElement;
  private _sessionsNode: HTMLElement;
  private _errorNode: HTMLElement;
  private _gpuPoll: Poll;
  private _sessionsPoll: Poll;
  private _env: IEnvironmentReport | null = null;
  private _gpus: IGPUSample | null = null;
  private _sessions: ISession[] | null = null;
  private _errors: { [source: string]: string } = {};
  private _stopping = new Set<string>();
}
