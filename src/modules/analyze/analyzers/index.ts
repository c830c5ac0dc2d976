import { interfaces } from 'inversify';
import { Analyzer } from '../analyzer';
import { CaCertificateAnalyzer } from './destinationrule-ca';
import { ConflictingGatewayAnalyzer } from './conflicting-gateway';
import { IngressGatewayPortAnalyzer } from './gateway-port';

/** The mesh's own analyzers, bound to the Analyzer contribution point. */
export const BUILT_IN_ANALYZERS: interfaces.Newable<Analyzer>[] = [IngressGatewayPortAnalyzer, CaCertificateAnalyzer, ConflictingGatewayAnalyzer];
