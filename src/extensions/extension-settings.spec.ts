import { checkSettingDeclarations, readSettings } from './extension-settings';
import type { AmbientExtension } from './extension.types';

const extension: AmbientExtension = {
  name: 'corp',
  settings: [
    { name: 'CORP_URL', type: 'string', required: true, description: 'where the service is' },
    { name: 'CORP_RETRIES', type: 'number', default: 3, description: 'attempts per call' },
    { name: 'CORP_STRICT', type: 'boolean', default: false, description: 'refuse unknown users' },
    { name: 'CORP_REGION', type: 'string', description: 'optional region' },
  ],
};

describe('extension settings', () => {
  it('reads each variable as its declared type, defaults for the unset, absent when there is none', () => {
    expect(
      readSettings(extension, { CORP_URL: 'https://corp', CORP_RETRIES: ' 5 ', CORP_STRICT: 'on' }),
    ).toEqual({
      CORP_URL: 'https://corp',
      CORP_RETRIES: 5,
      CORP_STRICT: true,
      CORP_REGION: undefined,
    });
    expect(readSettings(extension, { CORP_URL: 'u', CORP_RETRIES: '', CORP_STRICT: '0' })).toEqual({
      CORP_URL: 'u',
      CORP_RETRIES: 3,
      CORP_STRICT: false,
      CORP_REGION: undefined,
    });
  });

  it('refuses a value not of its type or a missing required one, naming the variable and the extension', () => {
    expect(() => readSettings(extension, { CORP_URL: 'u', CORP_RETRIES: 'many' })).toThrow(
      'CORP_RETRIES: must be a number (got "many"; a setting of extension corp)',
    );
    expect(() => readSettings(extension, { CORP_URL: 'u', CORP_STRICT: 'yes please' })).toThrow(
      'CORP_STRICT: must be true or false (or 1 / 0, on / off) (got "yes please"; a setting of extension corp)',
    );
    expect(() => readSettings(extension, {})).toThrow(
      'CORP_URL: missing (a setting of extension corp: where the service is)',
    );
  });

  it('checks the declarations when the extension loads', () => {
    const check = (settings: unknown) => () => checkSettingDeclarations(settings);
    expect(check({})).toThrow('"settings" must be a list');
    expect(check([{ name: 'lower', type: 'string', description: 'd' }])).toThrow(
      'a setting needs a name of upper-case letters, digits and "_"',
    );
    expect(check([{ name: 'AMBIENT_X', type: 'string', description: 'd' }])).toThrow(
      "setting AMBIENT_X: AMBIENT_* variables are Ambient's own",
    );
    expect(check([{ name: 'X', type: 'date', description: 'd' }])).toThrow(
      'setting X: type must be one of string, number, boolean',
    );
    expect(check([{ name: 'X', type: 'number', default: '3', description: 'd' }])).toThrow(
      'setting X: its default must be a number',
    );
    expect(check([{ name: 'X', type: 'number' }])).toThrow('setting X has no description');
    const x = { name: 'X', type: 'string', description: 'd' };
    expect(check([x, x])).toThrow('setting X is declared twice');
    expect(check(extension.settings)).not.toThrow();
  });
});
