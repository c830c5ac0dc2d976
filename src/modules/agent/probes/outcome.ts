/** What one probe of the application found: the status the status port answers, and why. */
export interface ProbeOutcome {
  /** 200 on success; the application's own status for an HTTP answer; 500 when it could not be reached. */
  status: number;
  /** One line for the response body and the log. */
  detail: string;
}

/** `host:port`, with an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
