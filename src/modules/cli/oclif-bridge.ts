import type { Command } from '@oclif/core';

/**
 * oclif's explicit command strategy loads the command map from a module file. The map is
 * generated per run (built-in commands plus those plugins contribute), so this module is
 * that file: the runner hands it the map just before oclif loads it.
 */
let current: Record<string, Command.Class> = {};

export function handCommandMapToOclif(map: Record<string, Command.Class>): void {
  current = map;
}

Object.defineProperty(exports, 'COMMANDS', { enumerable: true, get: () => current });
