/**
 * The JSON wire models of the gpu-dask-kit server extension.
 *
 * One interface per JSON model, named after the Python function that produces it (the Python
 * side is the source of truth; keep them in step). Routes are under `<base_url>gpu-dask-kit/api/`.
 */

/** One GPU found by detection (an item of `environment_model(...)["gpus"]`). */
// mirrors dataclasses.asdict(GPUInfo) in EnvironmentReport.to_dict (gpu_dask_kit.environment_report)
export interface IGPUInfo {
  index: number;
  name: string;
  uuid: string;
  memory_total: number;
  memory_free: number;
  mig?: IGPUInfo[];
  others?: [number, number][]; // other processes on this GPU as NVML lists them: [PID, bytes] (shared machines)
}

/** A library the kit may use, and whether it is installed. */
// mirrors dataclasses.asdict(LibraryInfo) in EnvironmentReport.to_dict
export interface ILibraryInfo {
  installed: boolean;
  version: string | null;
  importable?: boolean | null;
  error?: string | null;
  cuda_major?: number | null;
  distribution?: string | null;
}

/** `GET environment`: the environment report plus the one memory-warning threshold. */
// mirrors gpu_dask_kit.server.models.environment_model (EnvironmentReport.to_dict() + memory_thresholds())
export interface IEnvironmentModel {
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
  /** Bytes of host memory (psutil), read once by detect() so that the planner stays pure. */
  host_memory_total?: number | null;
  /** This server's CUDA_VISIBLE_DEVICES entries (indices or UUIDs); null when it is not set. */
  visible_devices?: string[] | null;
  /** Fraction of a memory limit from which a bar shows a warning (monitor.MEMORY_WARN, 0.8). */
  memory_warn: number;
  /** Fraction of a memory limit from which a bar shows it is critical (monitor.MEMORY_CRITICAL, 0.95). */
  memory_critical: number;
}

/** Live use of one GPU (an item of `GPUSample.to_dict()["gpus"]`). */
// mirrors the dicts built by gpu_dask_kit.environment.sample_gpus
export interface IGPUUse {
  index: number;
  name: string;
  uuid: string;
  memory_total: number;
  memory_used: number;
  utilization: number | null;
}

/** `GET gpus` */
// mirrors gpu_dask_kit.environment_report.GPUSample.to_dict (served by server.sampler.GpuSampler.get)
export interface IGPUSample {
  gpus: IGPUUse[];
  reason: string | null;
  time: number;
}

/**
 * Memory totals over the workers of one session (null when the scheduler did not answer).
 * Device figures are null when no worker reports them (unknown is not zero).
 */
// mirrors gpu_dask_kit.server.models.memory_totals
export interface IMemoryTotals {
  workers: number;
  host_memory_used: number;
  host_memory_limit: number;
  /** Device data moved to host memory (dask-cuda's store and cuDF's spilling). */
  spilled_to_host: number;
  /** Bytes on disk in the workers' stores, device-serialized values included. */
  spilled_to_disk: number;
  /** Task results held on the device in dask-cuda's store. */
  device_data: number | null;
  /** The spill limit: above it the store moves data to host (null: none). */
  device_memory_limit: number | null;
  /** Bytes allocated through RMM now (null unless allocations are tracked). */
  rmm_used: number | null;
  /** Bytes the RMM pool reserved (null: async allocator or no pool). */
  rmm_pool_size: number | null;
  /** NVML: the whole GPUs, all processes and pool reservations included. */
  gpu_total_in_use: number | null;
  device_memory_total: number | null;
}

/** One session of this user, as the registry knows it, plus what the server adds. */
// mirrors gpu_dask_kit.server.models.session_model (SessionRecord.to_dict plus the last 3 fields)
export interface ISessionModel {
  id: string;
  /** Identity of the process that started the session (pid, create_time). */
  owner: { pid: number; create_time: number; [key: string]: unknown };
  owner_pid: number;
  alive: boolean;
  stale: boolean;
  /** "gpu" | "cpu" */
  mode: string;
  n_workers: number;
  scheduler_address: string | null;
  dashboard_link: string | null;
  started: string;
  /** How the session was started: "notebook", "script", "labextension", "connect"... */
  started_by: string;
  options: { [key: string]: unknown };
  /** Identities of the recorded worker processes. */
  processes: { pid: number; create_time: number; [key: string]: unknown }[];
  host: string;
  /** deploy="slurm": the name every worker job of the session carries; null for a local session. */
  slurm_job_name: string | null;
  /** The session's SLURM jobs submitted and not yet cancelled (empty for a local session). */
  slurm_job_ids: string[];
  /** Dashboard path relative to the server's base URL (through jupyter-server-proxy), or null. */
  dashboard_path: string | null;
  /** True when this Jupyter server process owns the cluster (dask-labextension's "+ NEW"). */
  in_server: boolean;
  memory: IMemoryTotals | null;
}

/** `GET sessions` */
// mirrors gpu_dask_kit.server.models.sessions_reply
export interface ISessionsReply {
  sessions: ISessionModel[];
  time: number;
}

/** One of the user's Dask Gateway clusters (an item of `GET gateway-clusters`). */
// mirrors gpu_dask_kit.server.models.gateway_cluster_model
export interface IGatewayClusterModel {
  name: string;
  /** The gateway's status, lower case: "pending", "running", "stopping", ... */
  status: string;
  /** Workers its scheduler reports; null when it did not answer. */
  workers: number | null;
  /** The dashboard through the gateway's proxy; null until it runs. */
  dashboard_link: string | null;
  started: string | null;
}

/** `GET gateway-clusters`: `configured` false when no gateway is named (no sidebar section). */
// mirrors gpu_dask_kit.server.models.gateway_clusters_reply
export interface IGatewayClustersReply {
  configured: boolean;
  address: string | null;
  clusters: IGatewayClusterModel[];
  /** One sentence (unreachable gateway, refused login, ...), or null. */
  error: string | null;
  time: number;
}
