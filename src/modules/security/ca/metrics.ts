/**
 * The CA's metrics, named as in spec/01 ("Events"): Sum = Counter, LastValue = Gauge. The
 * expiry gauges are computed when scraped, from the CA's current root and signing chain,
 * so a rotation shows at the next scrape.
 */
import { Counter, Gauge, Registry } from '../../shared/prom-client';

/** What the expiry gauges read. */
export interface CaExpirySource {
  /** The current root's notAfter. */
  rootExpiry(): Date;
  /** The earliest notAfter of the CA's signing chain. */
  certChainExpiry(): Date;
}

export interface CaMetricsOptions {
  /** The CA to report expiries of; can be given later with `watch`. */
  expiry?: CaExpirySource;
  /** Milliseconds since the epoch. */
  now?: () => number;
}

export class CaMetrics {
  readonly authenticationFailures: Counter;
  readonly csrs: Counter;
  readonly csrParsingErrors: Counter;
  readonly csrSignErrors: Counter;
  readonly idExtractionErrors: Counter;
  readonly successfulIssuances: Counter;
  readonly certChainExpirySeconds: Gauge;
  readonly certChainExpiryTimestamp: Gauge;
  readonly rootCertExpirySeconds: Gauge;
  readonly rootCertExpiryTimestamp: Gauge;
  private source: CaExpirySource | undefined;

  constructor(registry: Registry, options: CaMetricsOptions = {}) {
    const registers = [registry];
    const now = options.now ?? Date.now;
    this.source = options.expiry;
    const counter = (name: string, help: string) => new Counter({ name, help, registers });
    // Set at scrape time; 0 until a CA is watched.
    const expiryGauge = (name: string, help: string, read: (source: CaExpirySource) => number) => {
      const metrics = this;
      return new Gauge({
        name,
        help,
        registers,
        collect() {
          if (metrics.source) this.set(read(metrics.source));
        },
      });
    };
    const secondsUntil = (date: Date) => (date.getTime() - now()) / 1000;

    this.authenticationFailures = counter('ca_server_authentication_failure_count', 'Number of authentication failures.');
    this.csrs = counter('ca_server_csr_count', 'Number of certificate signing requests received.');
    this.csrParsingErrors = counter('ca_server_csr_parsing_err_count', 'Number of errors parsing a certificate signing request.');
    this.csrSignErrors = counter('ca_server_csr_sign_err_count', 'Number of errors signing a certificate signing request.');
    this.idExtractionErrors = counter('ca_server_id_extraction_err_count', 'Number of errors extracting the identity from a request.');
    this.successfulIssuances = counter('ca_server_success_cert_issuance_count', 'Number of certificates issued.');
    this.certChainExpirySeconds = expiryGauge(
      'ca_server_cert_chain_expiry_seconds',
      "Seconds before the CA's certificate chain expires; negative when expired.",
      (source) => secondsUntil(source.certChainExpiry()),
    );
    this.certChainExpiryTimestamp = expiryGauge(
      'ca_server_cert_chain_expiry_timestamp',
      "Unix time, in seconds, when the CA's certificate chain expires.",
      (source) => source.certChainExpiry().getTime() / 1000,
    );
    this.rootCertExpirySeconds = expiryGauge(
      'ca_server_root_cert_expiry_seconds',
      'Seconds before the root certificate expires; negative when expired.',
      (source) => secondsUntil(source.rootExpiry()),
    );
    this.rootCertExpiryTimestamp = expiryGauge(
      'ca_server_root_cert_expiry_timestamp',
      'Unix time, in seconds, when the root certificate expires.',
      (source) => source.rootExpiry().getTime() / 1000,
    );
  }

  /** Reports the expiries of `source` from now on. */
  watch(source: CaExpirySource): void {
    this.source = source;
  }
}
