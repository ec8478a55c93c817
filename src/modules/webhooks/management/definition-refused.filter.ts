import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { sendInvalidDefinition } from '../factories/definition-response';
import { DefinitionRefused } from './webhook-management.service';

/** A webhook change that would make the definition invalid: 400 with its diagnostics. */
@Catch(DefinitionRefused)
export class DefinitionRefusedFilter implements ExceptionFilter {
  catch(exception: DefinitionRefused, host: ArgumentsHost): void {
    sendInvalidDefinition(host.switchToHttp().getResponse<Response>(), exception.diagnostics);
  }
}
