// Public face of the store: the port the registry, log and fsck use. Implementations live in their own folders.

export * from './port.ts';
