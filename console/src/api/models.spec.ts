import { initialModel, modelUnavailableReason } from './models';

describe('initialModel', () => {
  const model = (id: string, disabled: boolean) => ({ id, disabled });

  it('keeps the default when it can run', () => {
    const list = { default_model_id: 'a', models: [model('b', false), model('a', false)] };
    expect(initialModel(list)).toBe('');
  });

  it('never starts on a disabled default: the first enabled model instead', () => {
    const list = {
      default_model_id: 'cloud',
      models: [model('cloud', true), model('other-cloud', true), model('local', false)],
    };
    expect(initialModel(list)).toBe('local');
  });

  it('leaves the choice empty when no model is enabled', () => {
    const list = { default_model_id: 'cloud', models: [model('cloud', true)] };
    expect(initialModel(list)).toBe('');
  });
});

describe('modelUnavailableReason', () => {
  it('says a provider key is not set, naming its variable, instead of an administrator’s choice', () => {
    expect(
      modelUnavailableReason({
        disabled: true,
        disable_reason: 'ADMIN_DISABLED',
        disable_detail: 'provider key AMBIENT_ANTHROPIC_KEY is not set',
        missing_provider_key: true,
        provider_key_env: 'AMBIENT_ANTHROPIC_KEY',
      }),
    ).toBe('Provider key not set (AMBIENT_ANTHROPIC_KEY)');
  });

  it('says what the catalogue says of other disabled models, and nothing of enabled ones', () => {
    expect(
      modelUnavailableReason({
        disabled: true,
        disable_reason: 'ADMIN_DISABLED',
        disable_detail: 'disabled in the model catalogue',
      }),
    ).toBe('Turned off by an administrator: disabled in the model catalogue');
    expect(modelUnavailableReason({ disabled: true })).toBe('Disabled');
    expect(modelUnavailableReason({ disabled: false })).toBeUndefined();
  });
});
