/**
 * The web client's own screens, by the `client_view` key of the `WindowAction` that opens them
 * (CONTRACTS C2): the shell renders `SCREENS[action.client_view](props)` with the props every view
 * gets (`action`, `views`, `registry`, `modelInfo`, `route`, `navigate`, `session`).
 */
import { ApiKeysScreen } from './api-keys-screen.js';
import { ApiReferenceScreen } from './api-reference-screen.js';
import { ModulesScreen } from './modules-screen.js';
import { ProfileScreen } from './profile-screen.js';

export const SCREENS = Object.freeze({
  api_keys: ApiKeysScreen,
  api_reference: ApiReferenceScreen,
  modules: ModulesScreen,
  profile: ProfileScreen,
});
