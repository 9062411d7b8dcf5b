import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** The REST namespace of the gpu-dask-kit server extension, under the server's base URL. */
export const API_NAMESPACE = 'gpu-dask-kit/api';

/**
 * Call a gpu-dask-kit route and parse its JSON reply.
 *
 * Every URL is built from `ServerConnection.makeSettings()`, so the extension works behind
 * JupyterHub and other proxies. Errors raise `ServerConnection.ResponseError` with the
 * server's JSON message.
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, endPoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let data: unknown = text;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      // keep the raw text for the error message below
    }
  }
  if (!response.ok) {
    const reply = data as { message?: string } | null;
    const message =
      (reply && typeof reply === 'object' && reply.message) || text || response.statusText;
    throw new ServerConnection.ResponseError(response, message);
  }
  return data as T;
}

/** An absolute URL for a path relative to the server's base URL. */
export function serverUrl(
  path: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  return URLExt.join(settings.baseUrl, path);
}
