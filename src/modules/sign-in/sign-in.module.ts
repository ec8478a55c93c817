import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TeamsModule } from '../teams';
import { MeController } from './me.controller';
import { OidcLoginAttempt } from './oidc-login-attempt.entity';
import { OidcLoginAttemptRepository } from './oidc-login-attempt.repository';
import { OidcRelyingParty } from './oidc-relying-party.service';
import { SignInController } from './sign-in.controller';
import { SignInService } from './sign-in.service';

/** The api role's sign-in routes: console SSO (OpenID Connect) and `GET /me`. */
@Module({
  imports: [TeamsModule, TypeOrmModule.forFeature([OidcLoginAttempt])],
  controllers: [SignInController, MeController],
  providers: [OidcLoginAttemptRepository, OidcRelyingParty, SignInService],
})
export class SignInApiModule {}
