import { IsInt, IsString, MaxLength, MetadataStorage, validateSync } from 'class-validator';
import { cacheValidationMetadata } from './validation-metadata-cache';

describe('cacheValidationMetadata', () => {
  cacheValidationMetadata();

  class Base {
    @IsString()
    name!: unknown;
  }

  class Derived extends Base {
    @IsInt()
    count!: unknown;
  }

  const errorsOf = (object: object): string[] =>
    validateSync(object).flatMap((error) => Object.keys(error.constraints ?? {}));

  it('validates as before, inherited constraints included, with one scan per class', () => {
    const storage = new MetadataStorage();
    const scan = jest.spyOn(storage, 'getTargetValidationMetadatas');
    cacheValidationMetadata(storage);
    const first = storage.getTargetValidationMetadatas(Derived, '', false, false);
    expect(storage.getTargetValidationMetadatas(Derived, '', false, false)).toBe(first);
    expect(scan).toHaveBeenCalledTimes(1);
    storage.getTargetValidationMetadatas(Derived, '', false, false, ['admin']);
    expect(scan).toHaveBeenCalledTimes(2);

    expect(errorsOf(Object.assign(new Derived(), { name: 1, count: 'x' }))).toEqual([
      'isInt',
      'isString',
    ]);
    expect(errorsOf(Object.assign(new Derived(), { name: 'n', count: 2 }))).toEqual([]);
  });

  it('sees constraints a decorator adds later', () => {
    const valid = Object.assign(new Derived(), { name: 'a long name', count: 2 });
    expect(errorsOf(valid)).toEqual([]);
    // What a class loaded later does to a property of an existing one.
    MaxLength(3)(Base.prototype, 'name');
    expect(errorsOf(valid)).toEqual(['maxLength']);
  });
});
