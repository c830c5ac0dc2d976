import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A small metrics store speaking the instant-query API of a Prometheus-compatible server
 * (`GET|POST /api/v1/query?query=...&time=...`), holding real samples and evaluating the
 * query shapes `meshctl x metrics` sends from them: `sum(rate(<selector>[<range>]))`,
 * optionally `by (<labels>)`, and `histogram_quantile(<q>, <that>)`. Selectors take `=`, `!=`,
 * `=~` and `!~` (regular expressions anchored, as Prometheus anchors them); rate() extrapolates
 * as Prometheus does; histogram_quantile interpolates within buckets as Prometheus does.
 * Anything else is answered `bad_data`, as a real server answers a query it cannot parse.
 */

/** One time series: its labels (`__name__` is the metric name) and its samples (unix seconds, value). */
export interface Series {
  labels: Record<string, string>;
  samples: [number, number][];
}

export interface MetricsStore {
  readonly host: string;
  readonly port: number;
  /** Adds samples to the series with exactly these labels (creating it). */
  add(labels: Record<string, string>, samples: [number, number][]): void;
  /** Every query received, in order. */
  readonly queries: string[];
  stop(): Promise<void>;
}

type Vector = { labels: Record<string, string>; value: number }[];

class BadData extends Error {}

interface Matcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** A tiny tokenizer-free parser over the query text, for the shapes above. */
class Parser {
  private at = 0;

  constructor(private readonly text: string) {}

  parse(): (series: readonly Series[], time: number) => Vector {
    const expr = this.expression();
    this.space();
    if (this.at !== this.text.length) throw new BadData(`unexpected ${JSON.stringify(this.text.slice(this.at, this.at + 20))} at position ${this.at}`);
    return expr;
  }

  private expression(): (series: readonly Series[], time: number) => Vector {
    const name = this.identifier();
    if (name === 'sum') {
      this.expect('(');
      const inner = this.expression();
      this.expect(')');
      const by = this.peekWord('by') ? this.labelList() : [];
      return (series, time) => sumBy(inner(series, time), by);
    }
    if (name === 'rate') {
      this.expect('(');
      const { metric, matchers } = this.selector();
      this.expect('[');
      const range = parseRange(this.until(']'));
      this.expect(']');
      this.expect(')');
      return (series, time) => rate(series, metric, matchers, range, time);
    }
    if (name === 'histogram_quantile') {
      this.expect('(');
      const q = Number(this.until(','));
      if (!Number.isFinite(q)) throw new BadData('histogram_quantile: the quantile must be a number');
      this.expect(',');
      const inner = this.expression();
      this.expect(')');
      return (series, time) => histogramQuantile(q, inner(series, time));
    }
    throw new BadData(`unsupported function or expression ${JSON.stringify(name)}`);
  }

  private selector(): { metric: string; matchers: Matcher[] } {
    const metric = this.identifier();
    const matchers: Matcher[] = [];
    this.space();
    if (this.text[this.at] !== '{') return { metric, matchers };
    this.at++;
    for (;;) {
      this.space();
      if (this.text[this.at] === '}') {
        this.at++;
        return { metric, matchers };
      }
      const name = this.identifier();
      this.space();
      const op = (['=~', '!~', '!=', '='] as const).find((o) => this.text.startsWith(o, this.at));
      if (!op) throw new BadData(`expected a label matcher operator after ${name}`);
      this.at += op.length;
      this.space();
      matchers.push({ name, op, value: this.string() });
      this.space();
      if (this.text[this.at] === ',') this.at++;
    }
  }

  private labelList(): string[] {
    this.expect('(');
    const labels: string[] = [];
    for (;;) {
      labels.push(this.identifier());
      this.space();
      if (this.text[this.at] === ',') {
        this.at++;
        continue;
      }
      this.expect(')');
      return labels;
    }
  }

  private string(): string {
    const quote = this.text[this.at];
    if (quote !== '"' && quote !== "'") throw new BadData(`expected a string at position ${this.at}`);
    let out = '';
    for (this.at++; this.at < this.text.length; this.at++) {
      const c = this.text[this.at];
      if (c === quote) {
        this.at++;
        return out;
      }
      if (c === '\\') {
        const next = this.text[++this.at];
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
      } else out += c;
    }
    throw new BadData('unterminated string');
  }

  private identifier(): string {
    this.space();
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(this.text.slice(this.at));
    if (!m) throw new BadData(`expected a name at position ${this.at}`);
    this.at += m[0].length;
    return m[0];
  }

  private peekWord(word: string): boolean {
    this.space();
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  private until(stop: string): string {
    const end = this.text.indexOf(stop, this.at);
    if (end < 0) throw new BadData(`expected ${stop}`);
    const out = this.text.slice(this.at, end).trim();
    this.at = end;
    return out;
  }

  private expect(c: string): void {
    this.space();
    if (this.text[this.at] !== c) throw new BadData(`expected ${JSON.stringify(c)} at position ${this.at}`);
    this.at++;
  }

  private space(): void {
    while (/\s/.test(this.text[this.at] ?? '')) this.at++;
  }
}

/** Prometheus range durations: `1m`, `1m0s`, `90s`, `1h30m`, `500ms` (integers per unit). */
function parseRange(text: string): number {
  const m = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(text);
  if (!text || !m) throw new BadData(`invalid duration ${JSON.stringify(text)}`);
  const [y, w, d, h, min, s, ms] = m.slice(1).map((v) => Number(v ?? 0));
  return y * 31_536_000 + w * 604_800 + d * 86_400 + h * 3600 + min * 60 + s + ms / 1000;
}

function matches(labels: Record<string, string>, m: Matcher): boolean {
  const value = labels[m.name] ?? '';
  switch (m.op) {
    case '=':
      return value === m.value;
    case '!=':
      return value !== m.value;
    case '=~':
      return new RegExp(`^(?:${m.value})$`).test(value);
    case '!~':
      return !new RegExp(`^(?:${m.value})$`).test(value);
  }
}

/** Prometheus's extrapolated rate of each matching counter series over (time - range, time]. */
function rate(all: readonly Series[], metric: string, matchers: readonly Matcher[], range: number, time: number): Vector {
  const out: Vector = [];
  const start = time - range;
  for (const series of all) {
    if (series.labels.__name__ !== metric || !matchers.every((m) => matches(series.labels, m))) continue;
    const points = series.samples.filter(([t]) => t > start && t <= time).sort((a, b) => a[0] - b[0]);
    if (points.length < 2) continue;
    let increase = points[points.length - 1][1] - points[0][1];
    for (let i = 1; i < points.length; i++) if (points[i][1] < points[i - 1][1]) increase += points[i - 1][1];
    const [firstT, firstV] = points[0];
    const lastT = points[points.length - 1][0];
    const sampled = lastT - firstT;
    const average = sampled / (points.length - 1);
    const threshold = average * 1.1;
    let toStart = firstT - start;
    const toEnd = time - lastT;
    if (increase > 0 && firstV >= 0) toStart = Math.min(toStart, sampled * (firstV / increase));
    let interval = sampled + (toStart < threshold ? toStart : average / 2) + (toEnd < threshold ? toEnd : average / 2);
    if (interval <= 0) interval = sampled;
    const labels = { ...series.labels };
    delete labels.__name__;
    out.push({ labels, value: ((increase * interval) / sampled) / range });
  }
  return out;
}

function sumBy(vector: Vector, by: readonly string[]): Vector {
  const groups = new Map<string, { labels: Record<string, string>; value: number }>();
  for (const sample of vector) {
    const labels = Object.fromEntries(by.filter((l) => sample.labels[l] !== undefined).map((l) => [l, sample.labels[l]]));
    const key = JSON.stringify(labels);
    const group = groups.get(key) ?? { labels, value: 0 };
    group.value += sample.value;
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** Prometheus's bucketQuantile over each group of buckets (same labels but `le`). */
function histogramQuantile(q: number, vector: Vector): Vector {
  const groups = new Map<string, { labels: Record<string, string>; buckets: { le: number; count: number }[] }>();
  for (const sample of vector) {
    const { le, ...rest } = sample.labels;
    if (le === undefined) continue;
    const key = JSON.stringify(rest);
    const group = groups.get(key) ?? { labels: rest, buckets: [] };
    group.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: sample.value });
    groups.set(key, group);
  }
  return [...groups.values()].map(({ labels, buckets }) => ({ labels, value: bucketQuantile(q, buckets) }));
}

function bucketQuantile(q: number, input: { le: number; count: number }[]): number {
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const buckets = [...input].sort((a, b) => a.le - b.le);
  if (buckets.length < 2 || buckets[buckets.length - 1].le !== Infinity) return NaN;
  for (let i = 1; i < buckets.length; i++) buckets[i].count = Math.max(buckets[i].count, buckets[i - 1].count);
  const observations = buckets[buckets.length - 1].count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  const b = buckets.findIndex((bucket) => bucket.count >= rank);
  if (b === buckets.length - 1) return buckets[buckets.length - 2].le;
  if (b === 0 && buckets[0].le <= 0) return buckets[0].le;
  const startBound = b === 0 ? 0 : buckets[b - 1].le;
  let count = buckets[b].count;
  if (b > 0) {
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  return startBound + (buckets[b].le - startBound) * (rank / count);
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts the store on 127.0.0.1 and a free port. */
export async function startMetricsStore(): Promise<MetricsStore> {
  const series = new Map<string, Series>();
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const send = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      };
      if (url.pathname !== '/api/v1/query') return send(404, { status: 'error', errorType: 'not_found', error: `no API at ${url.pathname}` });
      const params = req.method === 'POST' ? new URLSearchParams(await readBody(req)) : url.searchParams;
      const query = params.get('query') ?? '';
      queries.push(query);
      const time = params.has('time') ? Number(params.get('time')) : Date.now() / 1000;
      try {
        if (!Number.isFinite(time)) throw new BadData(`invalid time ${JSON.stringify(params.get('time'))}`);
        const result = new Parser(query).parse()([...series.values()], time);
        send(200, { status: 'success', data: { resultType: 'vector', result: result.map((s) => ({ metric: s.labels, value: [time, formatValue(s.value)] })) } });
      } catch (err) {
        if (err instanceof BadData || err instanceof SyntaxError) return send(400, { status: 'error', errorType: 'bad_data', error: err.message });
        send(500, { status: 'error', errorType: 'internal', error: (err as Error).message });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    queries,
    add(labels, samples) {
      const key = JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
      const s = series.get(key) ?? { labels: { ...labels }, samples: [] };
      s.samples.push(...samples);
      series.set(key, s);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
