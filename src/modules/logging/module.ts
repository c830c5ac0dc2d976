import { ContainerModule } from 'inversify';
import { Program } from '../settings/types';
import { Logging, LoggingToken } from './logging';

export function loggingModule(program: Program): ContainerModule {
  return new ContainerModule((bind) => {
    bind(LoggingToken).toConstantValue(new Logging(program));
  });
}
