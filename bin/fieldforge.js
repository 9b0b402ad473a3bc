#!/usr/bin/env node
// Runs the TypeScript CLI without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
