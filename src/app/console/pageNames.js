// The service's own names, as the page was served with them on <body> (src/app/console.ts writes
// them from the service's lists).
/* global document */

const listed = (name) => (document.body.dataset[name] ?? '').split(' ').filter(Boolean);

/** Every permission a key may hold (data-permissions). */
export const PERMISSIONS = listed('permissions');
