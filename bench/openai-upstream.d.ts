export interface UpstreamRequest {
  body: any;
  authorization?: string;
  /** The client closed the connection before the answer was complete. */
  closedEarly: boolean;
  done: boolean;
}

export interface Upstream {
  url: string;
  requests: UpstreamRequest[];
  close(): Promise<void>;
}

export function startUpstream(options?: { port?: number; tokens?: number; delayMs?: number }): Promise<Upstream>;
