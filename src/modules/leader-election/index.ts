/** Leader election with orchestrator Leases, and the singleton controllers only the leader runs. */
export { describeApiError, LeaseElector, LeaseElectorOptions, LeaseTimings, timingsFromLeaseDuration } from './lease-elector';
export {
  ELECTIONS,
  LeaderElectionOptions,
  LeaderElectionOptionsFromSettings,
  LeaderElectionOptionsToken,
  SingletonController,
  SingletonControllers,
} from './singleton-controllers';
export { leaderElectionModule } from './module';
