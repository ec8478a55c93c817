/** How a sender proves it may deliver: bearer token, token in the URL, or a provider signature. */
export const AUTH_MODES = ['token', 'url_token', 'signature'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];
