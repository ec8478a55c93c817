/** Where the API is served under the public URL: `https://host/api/v1/…`. */
export const API_PREFIX = 'api/v1';
