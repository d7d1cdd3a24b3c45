/** Set by the standalone build (bundle.ts): what the repository otherwise provides as files. */
declare const OUTRIGGER_EMBEDDED: { readonly version: string; readonly referenceProfile: string } | undefined;

export const embedded = typeof OUTRIGGER_EMBEDDED === 'undefined' ? undefined : OUTRIGGER_EMBEDDED;
