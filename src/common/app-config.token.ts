/**
 * The Nest token the application's validated config (src/config's AppConfig) is provided under.
 * Here, below src/config, because common's own providers inject it and src/config builds on
 * common's vocabulary (roles, egress allow lists).
 */
export const APP_CONFIG = Symbol('APP_CONFIG');
