import { resolve } from 'node:path';

/** `node -r TS_REGISTER file.ts` runs one of Ambient's TypeScript sources (see ts-register.js). */
export const TS_REGISTER = resolve(__dirname, 'ts-register.js');
