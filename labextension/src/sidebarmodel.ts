/**
 * The sidebar's model: polls the server's REST routes, holds the state, and signals changes.
 * It knows nothing of the DOM; views listen to `changed` and render.
 */
import { ServerConnection } from '@jupyterlab/services';
import { JSONExt, JSONValue } from '@lumino/coreutils';
import { IPoll, Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { requestAPI } from './api';
import { IThresholds } from './bars';
import { GatewayModel } from './gateway';
import { IEnvironmentModel, IGPUSample, ISessionModel, ISessionsReply } from './models';

/** How often the model polls, in milliseconds. */
export interface IPollIntervals {
  gpus: number;
  sessions: number;
}

/**
 * Default intervals. The GPU poll matches the server's sampler (`c.GpuDaskKit.gpu_sample_interval`,
 * 1 s: NVML is read at most once a second whatever the number of tabs). Keep in step with
 * schema/plugin.json.
 */
export const DEFAULT_INTERVALS: IPollIntervals = { gpus: 1000, sessions: 2000 };

/** What changed: views re-render only that part. */
export type Change = 'environment' | 'gpus' | 'sessions' | 'errors';

/** Whether a new reply differs from the previous one (a sample's `time` aside). */
function differs(previous: object | null, next: object): boolean {
  const json = (v: object) => ({ ...v, time: 0 }) as unknown as JSONValue;
  if (previous === null) {
    return true;
  }
  return Array.isArray(next)
    ? !JSONExt.deepEqual(previous as unknown as JSONValue, next as unknown as JSONValue)
    : !JSONExt.deepEqual(json(previous), json(next));
}

/** Poll frequency: `interval` while things work, backing off up to a minute on errors. */
function frequency(interval: number): IPoll.Frequency {
  return { interval, backoff: true, max: Math.max(60 * 1000, interval) };
}

export class SidebarModel {
  constructor(
    intervals: IPollIntervals = DEFAULT_INTERVALS,
    settings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {
    this.serverSettings = settings;
    // polls run while a view is visible and the browser tab is shown
    const standby = () => (this._active ? 'when-hidden' : true);
    this._gpuPoll = new Poll({
      name: 'gpu-dask-kit:gpus',
      factory: () => this._refreshGPUs(),
      frequency: frequency(intervals.gpus),
      standby
    });
    this._sessionsPoll = new Poll({
      name: 'gpu-dask-kit:sessions',
      factory: () => this._refreshSessions(),
      frequency: frequency(intervals.sessions),
      standby
    });
    this.gateway = new GatewayModel(settings, standby);
  }

  /** The user's Dask Gateway clusters (a section shown only when a gateway is configured). */
  readonly gateway: GatewayModel;

  /** The server connection settings (base URL, token) every request uses. */
  readonly serverSettings: ServerConnection.ISettings;

  /** Emitted when a part of the state changes (not when a poll reads the same again). */
  get changed(): ISignal<this, Change> {
    return this._changed;
  }

  get environment(): IEnvironmentModel | null {
    return this._env;
  }

  get gpus(): IGPUSample | null {
    return this._gpus;
  }

  get sessions(): ISessionModel[] | null {
    return this._sessions;
  }

  /** The server's memory-warning threshold; null until the environment model has arrived. */
  get thresholds(): IThresholds | null {
    const env = this._env;
    return env ? { warn: env.memory_warn, critical: env.memory_critical } : null;
  }

  /** The current error messages, one per failing route. */
  get errors(): string[] {
    return Object.values(this._errors);
  }

  get intervals(): IPollIntervals {
    return {
      gpus: this._gpuPoll.frequency.interval,
      sessions: this._sessionsPoll.frequency.interval
    };
  }

  /** Change the poll intervals now: the next read happens at once, then at the new pace. */
  set intervals(value: IPollIntervals) {
    const polls: [Poll, number][] = [
      [this._gpuPoll, value.gpus],
      [this._sessionsPoll, value.sessions]
    ];
    for (const [poll, interval] of polls) {
      if (poll.frequency.interval !== interval) {
        poll.frequency = frequency(interval);
        void poll.refresh();
      }
    }
  }

  /** Whether a view shows the state; polls stand by while none does. */
  get active(): boolean {
    return this._active;
  }

  set active(value: boolean) {
    this._active = value;
    if (value) {
      void this.refresh();
      if (this._env === null) {
        // the threshold comes with it; a failed first read is retried when a view shows again
        this.loadEnvironment().catch(() => undefined);
      }
    }
  }

  isStopping(id: string): boolean {
    return this._stopping.has(id);
  }

  /** Re-read GPUs and sessions now. */
  async refresh(): Promise<void> {
    const polls = [this._gpuPoll.refresh(), this._sessionsPoll.refresh(), this.gateway.refresh()];
    await Promise.all(polls);
  }

  /** Read the environment model (detection and the memory-warning threshold). */
  async loadEnvironment(): Promise<IEnvironmentModel> {
    try {
      const env = await requestAPI<IEnvironmentModel>('environment', {}, this.serverSettings);
      const changed = differs(this._env, env);
      this._env = env;
      this._emitIf(changed, 'environment');
      this._setError('environment', null);
      return env;
    } catch (error) {
      this._setError('environment', `Environment: ${(error as Error).message}`);
      throw error;
    }
  }

  /** Shut a session down (or forget a connection), then re-read the list. */
  async shutdown(id: string): Promise<void> {
    this._stopping.add(id);
    this._changed.emit('sessions');
    try {
      const path = `sessions/${encodeURIComponent(id)}`;
      await requestAPI<void>(path, { method: 'DELETE' }, this.serverSettings);
    } finally {
      this._stopping.delete(id);
      this._changed.emit('sessions'); // the button is live again, even if the list reads the same
      await this._sessionsPoll.refresh();
    }
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._gpuPoll.dispose();
    this._sessionsPoll.dispose();
    this.gateway.dispose();
    Signal.clearData(this);
  }

  private async _refreshGPUs(): Promise<void> {
    try {
      const sample = await requestAPI<IGPUSample>('gpus', {}, this.serverSettings);
      const changed = differs(this._gpus, sample);
      this._gpus = sample;
      this._emitIf(changed, 'gpus');
      this._setError('gpus', null);
    } catch (error) {
      this._setError('gpus', `GPUs: ${(error as Error).message}`);
      throw error; // lets the Poll back off
    }
  }

  private async _refreshSessions(): Promise<void> {
    try {
      const reply = await requestAPI<ISessionsReply>('sessions', {}, this.serverSettings);
      const changed = differs(this._sessions, reply.sessions);
      this._sessions = reply.sessions;
      this._emitIf(changed, 'sessions');
      this._setError('sessions', null);
    } catch (error) {
      this._setError('sessions', `Sessions: ${(error as Error).message}`);
      throw error;
    }
  }

  private _emitIf(changed: boolean, part: Change): void {
    if (changed) {
      this._changed.emit(part);
    }
  }

  private _setError(source: string, message: string | null): void {
    if (this._errors[source] === (message ?? undefined)) {
      return;
    }
    if (message === null) {
      delete this._errors[source];
    } else {
      this._errors[source] = message;
    }
    this._changed.emit('errors');
  }

  private _changed = new Signal<this, Change>(this);
  private _gpuPoll: Poll;
  private _sessionsPoll: Poll;
  private _active = false;
  private _disposed = false;
  private _env: IEnvironmentModel | null = null;
  private _gpus: IGPUSample | null = null;
  private _sessions: ISessionModel[] | null = null;
  private _errors: { [source: string]: string } = {};
  private _stopping = new Set<string>();
}
