/**
 * The JSON wire models of the gpu-dask-kit server extension.
 *
 * Each interface mirrors exactly one Python function or method that produces the JSON; keep
 * them in step (the Python side is the source of truth).
 */

/** One GPU found by detection. */
// mirrors gpu_dask_kit.backend.GPUInfo (an item of EnvironmentReport.to_dict()["gpus"])
export interface IGPUInfo {
  index: number;
  name: string;
  uuid: string;
  memory_total: number;
  memory_free: number;
}

/** A library the kit may use, and whether it is installed. */
// mirrors gpu_dask_kit.backend.LibraryInfo
export interface ILibraryInfo {
  installed: boolean;
  version: string | null;
  importable?: boolean | null;
  error?: string | null;
}

/** `GET gpu-dask-kit/api/environment` */
// mirrors gpu_dask_kit.backend.EnvironmentReport.to_dict
export interface IEnvironmentReport {
  mode: 'gpu' | 'cpu';
  reason: string;
  reason_text: string;
  gpus: IGPUInfo[];
  driver_version: string | null;
  cuda_version: string | null;
  libraries: { [name: string]: ILibraryInfo };
  python: string;
  platform: string;
  cpu_count?: number;
}

/** Live use of one GPU. */
// mirrors an item of gpu_dask_kit.backend.GPUSample.to_dict()["gpus"]
export interface IGPUUse {
  index: number;
  name: string;
  uuid: string;
  memory_total: number;
  memory_used: number;
  utilization: number | null;
}

/** `GET gpu-dask-kit/api/gpus` */
// mirrors gpu_dask_kit.backend.GPUSample.to_dict
export interface IGPUSample {
  gpus: IGPUUse[];
  reason: string | null;
  time: number;
}

/** Memory totals over the workers of one session (null when the scheduler did not answer). */
// mirrors gpu_dask_kit.server.models.memory_totals
export interface IMemoryTotals {
  workers: number;
  host_memory_used: number;
  host_memory_limit: number;
  device_memory_used: number;
  device_memory_limit: number;
  spilled_to_host: number;
  spilled_to_disk: number;
}

/** One session of this user, as the registry knows it, plus what the server adds. */
// mirrors gpu_dask_kit.server.models.session_model (SessionRecord.to_dict plus the last 3 fields)
export interface ISession {
  id: string;
  owner_pid: number;
  alive: boolean;
  stale: boolean;
  backend: string;
  n_workers: number;
  scheduler_address: string | null;
  dashboard_link: string | null;
  started: string;
  kind: string;
  options: { [key: string]: unknown };
  /** Dashboard path relative to the server's base URL (through jupyter-server-proxy), or null. */
  dashboard_path: string | null;
  /** True when this Jupyter server process owns the cluster (dask-labextension's "+ NEW"). */
  in_server: boolean;
  memory: IMemoryTotals | null;
}

/** `GET gpu-dask-kit/api/sessions` */
// mirrors gpu_dask_kit.server.models.sessions_reply
export interface ISessionsReply {
  sessions: ISession[];
  time: number;
}
