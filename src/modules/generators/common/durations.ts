import { Duration } from '../../settings/duration';

/** A spec duration (`5s`, `100ms`) as a google.protobuf.Duration object. */
export function protoDuration(text: string): { seconds: number; nanos?: number } {
  const d = Duration.parse(text);
  const seconds = Number(d.nanos / 1_000_000_000n);
  const nanos = Number(d.nanos % 1_000_000_000n);
  return nanos ? { seconds, nanos } : { seconds };
}

/** Milliseconds as a google.protobuf.Duration object. */
export function msDuration(ms: number): { seconds: number; nanos?: number } {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos ? { seconds, nanos } : { seconds };
}
