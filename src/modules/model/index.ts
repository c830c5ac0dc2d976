export * from './proxy';
export * from './push-context';
