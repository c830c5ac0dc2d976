export { JwtAuthnFilterPlugin } from './generator';
