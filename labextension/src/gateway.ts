/**
 * The sidebar's "Dask Gateway clusters" section: a small model polling `GET gateway-clusters` (shown only
 * when the server says a gateway is configured) and its pure rendering, one row per cluster with Stop.
 */
import { ServerConnection } from '@jupyterlab/services';
import { JSONExt, JSONValue } from '@lumino/coreutils';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { requestAPI } from './api';
import { el } from './bars';
import { IGatewayClusterModel, IGatewayClustersReply } from './models';

/** How often the gateway list is read, in milliseconds (the server time-boxes each read). */
export const GATEWAY_INTERVAL = 5000;

export class GatewayModel {
  constructor(settings: ServerConnection.ISettings, standby: () => boolean | 'when-hidden') {
    this._settings = settings;
    this._poll = new Poll({
      name: 'gpu-dask-kit:gateway-clusters',
      factory: () => this._refresh(),
      frequency: { interval: GATEWAY_INTERVAL, backoff: true, max: 60 * 1000 },
      standby
    });
  }

  /** Emitted when the reply, a stop's progress or a stop's error changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The last reply; null until the first one. */
  get reply(): IGatewayClustersReply | null {
    return this._reply;
  }

  /** The last failure of this section (a stop refused, the route failing), or null. */
  get error(): string | null {
    return this._error;
  }

  isStopping(name: string): boolean {
    return this._stopping.has(name);
  }

  async refresh(): Promise<void> {
    await this._poll.refresh();
  }

  /** Stop the user's gateway cluster `name`, then re-read the list; a refusal becomes `error`. */
  async stop(name: string): Promise<void> {
    this._stopping.add(name);
    this._changed.emit();
    try {
      const path = `gateway-clusters/${encodeURIComponent(name)}`;
      await requestAPI<void>(path, { method: 'DELETE' }, this._settings);
      this._error = null;
    } catch (error) {
      this._error = `Could not stop ${name}: ${(error as Error).message}`;
    } finally {
      this._stopping.delete(name);
      this._changed.emit();
      await this._poll.refresh();
    }
  }

  dispose(): void {
    this._poll.dispose();
    Signal.clearData(this);
  }

  private async _refresh(): Promise<void> {
    try {
      const reply = await requestAPI<IGatewayClustersReply>('gateway-clusters', {}, this._settings);
      const same =
        this._reply !== null &&
        JSONExt.deepEqual(
          { ...this._reply, time: 0 } as unknown as JSONValue,
          { ...reply, time: 0 } as unknown as JSONValue
        );
      this._reply = reply;
      if (!same) {
        this._changed.emit();
      }
    } catch (error) {
      this._error = `Dask Gateway clusters: ${(error as Error).message}`;
      this._changed.emit();
      throw error; // lets the Poll back off
    }
  }

  private _settings: ServerConnection.ISettings;
  private _poll: Poll;
  private _reply: IGatewayClustersReply | null = null;
  private _error: string | null = null;
  private _stopping = new Set<string>();
  private _changed = new Signal<this, void>(this);
}

function clusterRow(cluster: IGatewayClusterModel, model: GatewayModel): HTMLElement {
  const row = el('li', 'gdk-session gdk-gateway-cluster');
  row.dataset.gatewayCluster = cluster.name;
  const head = el('div', 'gdk-session-head');
  const workers =
    cluster.workers === null
      ? '? workers'
      : `${cluster.workers} worker${cluster.workers === 1 ? '' : 's'}`;
  head.appendChild(el('span', 'gdk-session-title', `${cluster.status} · ${workers}`));
  row.appendChild(head);
  const started = cluster.started
    ? ` · started ${cluster.started.replace('T', ' ').slice(0, 19)}`
    : '';
  row.appendChild(el('div', 'gdk-muted gdk-session-address', `${cluster.name}${started}`));
  const buttons = el('div', 'gdk-session-actions');
  if (cluster.dashboard_link) {
    const link = el('a', 'gdk-dashboard-link', 'Dashboard');
    link.href = cluster.dashboard_link;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    buttons.appendChild(link);
  }
  const stopping = model.isStopping(cluster.name);
  const stop = el(
    'button',
    'jp-Button jp-mod-styled jp-mod-warn gdk-gateway-stop',
    stopping ? 'Stopping…' : 'Stop'
  );
  stop.disabled = stopping;
  stop.title = 'Stop this gateway cluster, its scheduler and workers';
  stop.onclick = () => void model.stop(cluster.name);
  buttons.appendChild(stop);
  row.appendChild(buttons);
  return row;
}

/** The section's content; empty (and hidden by the panel) while no gateway is configured. */
export function renderGateway(model: GatewayModel): HTMLElement {
  const box = el('div', 'gdk-gateway');
  const reply = model.reply;
  if (reply === null || !reply.configured) {
    return box;
  }
  const sentence = reply.error || model.error;
  if (sentence) {
    const error = el('div', 'gdk-gateway-error', sentence);
    error.setAttribute('role', 'alert');
    box.appendChild(error);
  }
  if (reply.clusters.length === 0 && !reply.error) {
    box.appendChild(
      el('div', 'gdk-muted gdk-no-gateway-clusters', `No cluster of yours on ${reply.address}.`)
    );
  }
  const list = el('ul', 'gdk-session-list');
  for (const cluster of reply.clusters) {
    list.appendChild(clusterRow(cluster, model));
  }
  box.appendChild(list);
  return box;
}
