/** The instant-query API of a Prometheus-compatible metrics store (`GET /api/v1/query`). */

/** One HTTP request to the store (through a port-forward to its pod). */
export type StoreRequest = (path: string) => Promise<{ status: number; body: Buffer }>;

interface QueryAnswer {
  status?: string;
  error?: string;
  errorType?: string;
  data?: { resultType?: string; result?: { metric?: Record<string, string>; value?: [number, string] }[] };
}

/**
 * The value of a query whose answer is a vector: its first sample, 0 when the vector is empty
 * (no traffic in the window), as the incumbent reads it. Other answers are errors naming the query.
 */
export async function vectorValue(request: StoreRequest, query: string, at: Date): Promise<number> {
  const path = `/api/v1/query?${new URLSearchParams({ query, time: (at.getTime() / 1000).toFixed(3) })}`;
  const response = await request(path);
  let answer: QueryAnswer;
  try {
    answer = JSON.parse(response.body.toString('utf8')) as QueryAnswer;
  } catch {
    throw new Error(`query '${query}': the metrics store answered HTTP ${response.status} with no JSON`);
  }
  if (answer.status !== 'success') throw new Error(`query '${query}' failed: ${answer.errorType ? `${answer.errorType}: ` : ''}${answer.error ?? `HTTP ${response.status}`}`);
  if (answer.data?.resultType !== 'vector') throw new Error(`query '${query}': expected a vector, got ${answer.data?.resultType ?? 'nothing'}`);
  const first = answer.data.result?.[0];
  if (!first?.value) return 0;
  return Number(first.value[1]);
}
