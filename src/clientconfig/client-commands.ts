import type { ClientConfig } from './read.js';

/** Placeholder: no check yet (the failing test comes first). */
export function refuseClientCommands(_cfg: ClientConfig): void {}
