// The approval words (issue 13 §3) for TypeScript callers (the CLI's `approvals show`): defined once in the plain ES
// module assets/approval-words.js, which the approvals page also runs in the browser.

export { describeAmount, revealHiddenCharacters } from './assets/approval-words.js';
