import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { OPERATOR_ROLES, OperatorRole } from '../platform/auth/operator';
import { OPERATOR_NAME } from './operator-token';

export class CreateOperatorDto {
  @IsString()
  @Matches(OPERATOR_NAME, { message: 'must be 1-63 lowercase letters, digits, dots, hyphens or underscores, starting with a letter' })
  name: string;

  @IsOptional()
  @IsIn(OPERATOR_ROLES)
  role?: OperatorRole;
}
