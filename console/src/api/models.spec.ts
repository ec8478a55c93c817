import { initialModel } from './models';

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
