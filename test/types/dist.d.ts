// A test that imports the built dist/X.js gets the types of src/X.ts, which it was compiled from (paths #src/* in
// tsconfig.test.json). A test importing another dist module fails the typecheck (TS7016) until it is listed here.
declare module '*/dist/alert/event.js' { export * from '#src/alert/event.js'; }
declare module '*/dist/attest/digest.js' { export * from '#src/attest/digest.js'; }
declare module '*/dist/attest/elf.js' { export * from '#src/attest/elf.js'; }
declare module '*/dist/attest/libraries.js' { export * from '#src/attest/libraries.js'; }
declare module '*/dist/attest/native.js' { export * from '#src/attest/native.js'; }
declare module '*/dist/cli/sandbox-proposal.js' { export * from '#src/cli/sandbox-proposal.js'; }
declare module '*/dist/error.js' { export * from '#src/error.js'; }
declare module '*/dist/escape.js' { export * from '#src/escape.js'; }
declare module '*/dist/launch/mapped-files.js' { export * from '#src/launch/mapped-files.js'; }
declare module '*/dist/own-words.js' { export * from '#src/own-words.js'; }
declare module '*/dist/protocol/json/reader.js' { export * from '#src/protocol/json/reader.js'; }
declare module '*/dist/provenance/identity.js' { export * from '#src/provenance/identity.js'; }
declare module '*/dist/provenance/npm-attestations.js' { export * from '#src/provenance/npm-attestations.js'; }
declare module '*/dist/provenance/policy.js' { export * from '#src/provenance/policy.js'; }
declare module '*/dist/provenance/shipped-root.js' { export * from '#src/provenance/shipped-root.js'; }
declare module '*/dist/provenance/trust-root.js' { export * from '#src/provenance/trust-root.js'; }
declare module '*/dist/proxy/ask.js' { export * from '#src/proxy/ask.js'; }
declare module '*/dist/proxy/refusal-text.js' { export * from '#src/proxy/refusal-text.js'; }
declare module '*/dist/proxy/response-shape.js' { export * from '#src/proxy/response-shape.js'; }
declare module '*/dist/sandbox/deny-plan.js' { export * from '#src/sandbox/deny-plan.js'; }
declare module '*/dist/sandbox/write-trace.js' { export * from '#src/sandbox/write-trace.js'; }
declare module '*/dist/sandbox/observe.js' { export * from '#src/sandbox/observe.js'; }
declare module '*/dist/sandbox/propose.js' { export * from '#src/sandbox/propose.js'; }
declare module '*/dist/store/paths.js' { export * from '#src/store/paths.js'; }
declare module '*/dist/store/servers.js' { export * from '#src/store/servers.js'; }
declare module '*/dist/supervise/server-stderr.js' { export * from '#src/supervise/server-stderr.js'; }
