export { bugReportOptions, BugReportFlags, BugReportOptions, DEFAULT_CONCURRENCY } from './options';
export { ARCHIVE_NAME, ARCHIVE_ROOT, BugReportOutput, runBugReport } from './report';
export { parsePodFilter, PodFilter, filterMatches, containerSelected } from './filter';
export { tarGz, TarEntry } from './tar';
export { Limiter } from './limiter';
export { REDACTED } from './redact';
