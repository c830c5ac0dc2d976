/**
 * What the webhooks, the trust plumbing and leader election take from the daemon: its
 * namespace (`--namespace`, else POD_NAMESPACE), the settings naming its webhook
 * configurations and root ConfigMap, and its trust roots (from its CA or mounted files).
 */
import { inject, injectable } from 'inversify';
import { LeaderElectionOptions, LeaderElectionOptionsFromSettings, LeaseTimings } from '../leader-election';
import { Settings, SettingsToken } from '../settings';
import { MeshRoots, revisionName, WebhookOptions } from '../webhook';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { DaemonSecurity } from './daemon-security';
import { orchestratorConfigured, systemNamespaceOf } from './orch-options';

@injectable()
export class WebhookOptionsFromFlags implements WebhookOptions {
  readonly onOrchestrator: boolean;
  readonly systemNamespace: string;
  readonly revision: string;
  readonly watchNamespace: string;
  readonly injectionWebhookConfigName: string;
  readonly validationWebhookConfigName: string;
  readonly caCertConfigMapName: string;

  constructor(@inject(DaemonFlagsToken) flags: DaemonFlags, @inject(SettingsToken) settings: Settings) {
    this.onOrchestrator = orchestratorConfigured(flags, settings);
    this.systemNamespace = systemNamespaceOf(flags, settings);
    this.revision = revisionName(settings.string('REVISION'));
    this.watchNamespace = settings.string('MESH_WATCH_NAMESPACE') || '';
    this.injectionWebhookConfigName = settings.string('INJECTION_WEBHOOK_CONFIG_NAME') || '';
    this.validationWebhookConfigName = settings.string('VALIDATION_WEBHOOK_CONFIG_NAME') || '';
    this.caCertConfigMapName = settings.string('PILOT_CA_CERT_CONFIGMAP') || 'mesh-ca-root-cert';
  }
}

/** The Leases live in the daemon's namespace (`--namespace` wins over POD_NAMESPACE). */
@injectable()
export class LeaderElectionOptionsFromFlags implements LeaderElectionOptions {
  readonly enabled: boolean;
  readonly namespace: string;
  readonly identity: string;
  readonly timings: LeaseTimings;

  constructor(@inject(DaemonFlagsToken) flags: DaemonFlags, @inject(SettingsToken) settings: Settings) {
    const fromSettings = new LeaderElectionOptionsFromSettings(settings);
    this.enabled = fromSettings.enabled;
    this.namespace = systemNamespaceOf(flags, settings);
    this.identity = fromSettings.identity;
    this.timings = fromSettings.timings;
  }
}

/** The daemon's roots, from its security plumbing. */
@injectable()
export class DaemonMeshRoots implements MeshRoots {
  constructor(@inject(DaemonSecurity) private readonly security: DaemonSecurity) {}

  meshRootsPem(): string {
    return this.security.rootsPem();
  }

  servingRootsPem(): string {
    return this.security.servingRootsPem();
  }

  onChange(listener: () => void): () => void {
    return this.security.onRootsChanged(listener);
  }
}
