// `toolseal/build`: the vendor's tools, run before anything is signed: `buildManifest` (one self-contained manifest
// from schemas split across files) and `captureManifest` (a draft from a live MCP server, stdio or Streamable HTTP,
// as a full client sees it; with a base, the previous version's capabilities and approval carried over).
// Loads json-schema-ref-parser and the MCP SDK: never imported by the registry or the host façade.

export {
  buildManifest,
  defaultBuildLimits,
  type BuildLimits,
  type BuildOptions,
  type BuiltManifest,
} from './build-manifest.ts';
export {
  CLIENT_CAPABILITY_NAMES,
  DEFAULT_SETTLE_MS,
  FULL_CLIENT_CAPABILITIES,
  captureManifest,
  captureTools,
  selectClientCapabilities,
  type CaptureManifestOptions,
  type CaptureSessionOptions,
  type CaptureSource,
  type CapturedManifest,
  type ClientCapabilityName,
} from './capture.ts';
export type { BaseChanges } from './capture-base.ts';
