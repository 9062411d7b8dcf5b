/**
 * The "GPU Dask" left sidebar, a view of a `SidebarModel`: GPUs, this user's sessions, and the
 * two entry buttons. It renders on the model's `changed` signal and sends user actions back.
 */
import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { serverUrl } from './api';
import { el } from './bars';
import { renderEnvironment } from './environment';
import { GatewayModel, renderGateway } from './gateway';
import { ISessionModel } from './models';
import { ISessionActions, renderGPUs, renderSessions } from './render';
import { Change, SidebarModel } from './sidebarmodel';

/** What the panel needs from the application. */
export interface IPanelOptions {
  model: SidebarModel;
  openWorkshop(): Promise<void>;
  /** Whether dask-labextension's pane is there to show a dashboard in. */
  hasDaskPane(): boolean;
  /** Show a dashboard URL in dask-labextension's pane. */
  openInDaskPane(url: string): Promise<void>;
}

/** The dashboard URL of a session, built from the server's base URL when it is proxied. */
export function dashboardUrl(
  session: ISessionModel,
  model: SidebarModel,
  status = true
): string | null {
  const strip = (url: string) => (status ? url : url.replace(/\/status\/?$/, ''));
  if (session.dashboard_path) {
    return serverUrl(strip(session.dashboard_path), model.serverSettings);
  }
  return session.dashboard_link ? strip(session.dashboard_link) : null;
}

export class GpuDaskPanel extends Widget {
  constructor(options: IPanelOptions) {
    super();
    this._options = options;
    this.model = options.model;
    this.id = 'gpu-dask-kit-sidebar';
    this.addClass('gdk-panel');
    this.title.caption = 'GPU Dask';

    const header = el('div', 'gdk-header');
    header.appendChild(el('h2', 'gdk-title', 'GPU Dask'));
    const buttons = el('div', 'gdk-header-buttons');
    const check = el('button', 'jp-Button jp-mod-styled gdk-check-env', 'Check environment');
    check.onclick = () => void this.checkEnvironment();
    const workshop = el(
      'button',
      'jp-Button jp-mod-styled jp-mod-accept gdk-open-workshop',
      'Open workshop'
    );
    workshop.onclick = () => void this._options.openWorkshop();
    buttons.appendChild(check);
    buttons.appendChild(workshop);
    header.appendChild(buttons);
    this.node.appendChild(header);

    this.node.appendChild(el('h3', 'gdk-section-title', 'GPUs'));
    this._gpuNode = this.node.appendChild(el('div', 'gdk-gpu-section'));
    this.node.appendChild(el('h3', 'gdk-section-title', 'Sessions'));
    this._sessionsNode = this.node.appendChild(el('div', 'gdk-sessions-section'));
    this._gatewayTitle = this.node.appendChild(
      el('h3', 'gdk-section-title gdk-gateway-title', 'Dask Gateway clusters')
    );
    this._gatewayNode = this.node.appendChild(el('div', 'gdk-gateway-section'));
    this._errorNode = this.node.appendChild(el('div', 'gdk-error'));
    this._errorNode.setAttribute('role', 'alert');

    this.model.changed.connect(this._onChanged, this);
    this.model.gateway.changed.connect(this._renderGateway, this);
    this._renderGateway();
    this._renderGPUs();
    this._renderSessions();
    this._renderErrors();
  }

  /** The state this view shows. */
  readonly model: SidebarModel;

  /** Re-read everything now (after a change the user made). */
  async refresh(): Promise<void> {
    await this.model.refresh();
  }

  /** Re-read the environment model and show it in a dialog. */
  async checkEnvironment(): Promise<void> {
    try {
      const env = await this.model.loadEnvironment();
      await showDialog({
        title: 'gpu-dask-kit environment',
        body: new Widget({ node: renderEnvironment(env) }),
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
    this.model.changed.disconnect(this._onChanged, this);
    this.model.gateway.changed.disconnect(this._renderGateway, this);
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.model.active = true;
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.model.active = false;
  }

  private async _shutdown(session: ISessionModel): Promise<void> {
    try {
      await this.model.shutdown(session.id);
    } catch (error) {
      await showErrorMessage('Could not shut the session down', error as Error);
    }
  }

  private _actions(): ISessionActions {
    return {
      dashboardUrl: (s: ISessionModel) => dashboardUrl(s, this.model),
      canOpenInDaskPane: this._options.hasDaskPane(),
      openInDaskPane: (s: ISessionModel) => {
        const url = dashboardUrl(s, this.model, false);
        if (url) {
          void this._options.openInDaskPane(url);
        }
      },
      shutdown: (s: ISessionModel) => void this._shutdown(s),
      isStopping: (s: ISessionModel) => this.model.isStopping(s.id)
    };
  }

  /** Re-render only what changed (a poll that reads the same again signals nothing). */
  private _onChanged(_: SidebarModel, part: Change): void {
    if (part === 'gpus' || part === 'environment') {
      this._renderGPUs();
    }
    if (part === 'sessions' || part === 'environment') {
      this._renderSessions(); // the environment model carries the memory-warning threshold
    }
    if (part === 'errors') {
      this._renderErrors();
    }
  }

  private _renderGPUs(): void {
    const { gpus, environment, thresholds } = this.model;
    this._gpuNode.replaceChildren(renderGPUs(gpus, environment, thresholds));
  }

  private _renderSessions(): void {
    const { sessions, thresholds } = this.model;
    this._sessionsNode.replaceChildren(renderSessions(sessions, this._actions(), thresholds));
  }

  /** The gateway section, shown only when the server names a gateway. */
  private _renderGateway(gateway: GatewayModel = this.model.gateway): void {
    const shown = !!gateway.reply?.configured;
    this._gatewayTitle.style.display = shown ? '' : 'none';
    this._gatewayNode.style.display = shown ? '' : 'none';
    this._gatewayNode.replaceChildren(renderGateway(gateway));
  }

  private _renderErrors(): void {
    const errors = this.model.errors;
    this._errorNode.textContent = errors.join(' · ');
    this._errorNode.style.display = errors.length ? '' : 'none';
  }

  private _options: IPanelOptions;
  private _gpuNode: HTMLElement;
  private _sessionsNode: HTMLElement;
  private _errorNode: HTMLElement;
  private _gatewayTitle: HTMLElement;
  private _gatewayNode: HTMLElement;
}
