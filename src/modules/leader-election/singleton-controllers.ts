/**
 * The controllers only one daemon replica may run at a time (they write to the orchestrator:
 * webhook configurations, the root certificate in every namespace, status), grouped by the
 * Lease that elects their leader, as the incumbent groups them. Every replica serves xDS and
 * the webhooks; only the leader of a group runs that group's controllers.
 */
import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import { orchLibrary } from '../orch';
import { inject, injectable, named } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { OrchClient } from '../orch';
import { ContributionProvider } from '../plugins';
import { Settings, SettingsToken } from '../settings';
import { LeaseElector, LeaseTimings, timingsFromLeaseDuration } from './lease-elector';

/** The incumbent's election (Lease) names, with the mesh's name. */
export const ELECTIONS = {
  /** Publishes the root certificate ConfigMap to every namespace. */
  namespaceController: 'mesh-namespace-controller-election',
  /** Keeps the webhook configurations' caBundle (and the validating one's failure policy). */
  validationController: 'mesh-validation-controller-election',
  /** Writes status to mesh resources. */
  statusController: 'mesh-status-leader',
} as const;

/** Contribution point: a controller that runs only on the leader of its election. */
export const SingletonController = Symbol.for('mesh.SingletonController');
export interface SingletonController {
  /** The Lease electing this controller's leader (one of ELECTIONS). */
  readonly election: string;
  /** For logs. */
  readonly name: string;
  /** Starts working: this replica has become the leader (or leader election is off). */
  start(): Promise<void> | void;
  /** Stops working and ends every write it began: leadership is lost or the daemon stops. */
  stop(): Promise<void> | void;
}

/** Bound by the daemon: where the Leases live and who this replica is. */
export const LeaderElectionOptionsToken = Symbol.for('mesh.LeaderElectionOptions');
export interface LeaderElectionOptions {
  /** ENABLE_LEADER_ELECTION: false assumes a single replica, which runs every controller. */
  enabled: boolean;
  /** The system namespace, where the Leases are. */
  namespace: string;
  /** holderIdentity: the pod name, else the host name and a random suffix (two replicas on one host differ). */
  identity: string;
  timings: LeaseTimings;
}

/** The options from the settings (POD_NAME, POD_NAMESPACE, ENABLE_LEADER_ELECTION, MESH_LEADER_ELECTION_LEASE_DURATION). */
@injectable()
export class LeaderElectionOptionsFromSettings implements LeaderElectionOptions {
  readonly enabled: boolean;
  readonly namespace: string;
  readonly identity: string;
  readonly timings: LeaseTimings;

  constructor(@inject(SettingsToken) settings: Settings) {
    this.enabled = settings.bool('ENABLE_LEADER_ELECTION');
    this.namespace = settings.string('POD_NAMESPACE') || 'mesh-system';
    this.identity = settings.string('POD_NAME') || `unknown-${os.hostname()}-${randomBytes(4).toString('hex')}`;
    this.timings = timingsFromLeaseDuration(settings.duration('MESH_LEADER_ELECTION_LEASE_DURATION').milliseconds);
  }
}

@injectable()
export class SingletonControllers {
  private readonly electors = new Map<string, LeaseElector>();
  private readonly bypassed: SingletonController[] = [];
  private readonly log: ScopedLogger;
  private started = false;

  constructor(
    @inject(ContributionProvider) @named(SingletonController) private readonly controllers: ContributionProvider<SingletonController>,
    @inject(LeaderElectionOptionsToken) private readonly options: LeaderElectionOptions,
    @inject(OrchClient) private readonly orch: OrchClient,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('controllers');
  }

  /** Joins one election per group (or, with leader election off, starts every controller). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const groups = new Map<string, SingletonController[]>();
    for (const c of this.controllers.getContributions()) groups.set(c.election, [...(groups.get(c.election) ?? []), c]);
    if (!this.options.enabled) {
      for (const [election, group] of groups) {
        this.log.info(`bypassing leader election: ${election} (ENABLE_LEADER_ELECTION=false)`);
        for (const c of group) {
          await this.run(c, 'start');
          this.bypassed.push(c);
        }
      }
      return;
    }
    const api = this.orch.api(orchLibrary().CoordinationV1Api);
    for (const [election, group] of groups) {
      const elector = new LeaseElector({
        api,
        namespace: this.options.namespace,
        name: election,
        identity: this.options.identity,
        timings: this.options.timings,
        log: this.log,
        onStartedLeading: async () => {
          for (const c of group) await this.run(c, 'start');
        },
        onStoppedLeading: async () => {
          for (const c of [...group].reverse()) await this.run(c, 'stop');
        },
      });
      this.electors.set(election, elector);
      elector.start();
    }
  }

  /** Stops every controller, then gives up the Leases (so a follower takes over at once). */
  async stop(): Promise<void> {
    await Promise.all([...this.electors.values()].map((e) => e.stop()));
    this.electors.clear();
    for (const c of this.bypassed.splice(0).reverse()) await this.run(c, 'stop');
    this.started = false;
  }

  /** Whether this replica leads `election` (always, with leader election off). */
  isLeader(election: string): boolean {
    if (!this.options.enabled) return this.started;
    return this.electors.get(election)?.isLeader ?? false;
  }

  private async run(c: SingletonController, what: 'start' | 'stop'): Promise<void> {
    this.log.info(`${what === 'start' ? 'starting' : 'stopping'} ${c.name}`);
    try {
      await c[what]();
    } catch (err) {
      this.log.error(`${c.name}: ${what} failed: ${(err as Error).message}`);
    }
  }
}
