/**
 * The livechat module's web assets for agents, loaded by the web client at start
 * (`web/client/module-assets.js`): the `visitor_presence` widget of a session's `visitor_online`
 * (the online dot in the sessions' list and on the form), and the "… is typing" line of a
 * session's chatter.
 */
import { linkStylesheet } from 'fieldforge/web/lib/stylesheet.js';
import { registry } from 'fieldforge/web/client/registry.js';
import { VisitorPresenceField, VisitorTyping, visitorPresenceCell } from './visitor-presence-field.js';

registry.field('visitor_presence', VisitorPresenceField, { types: ['Boolean'], cell: visitorPresenceCell });
registry.chatterPart('LiveChatSession', VisitorTyping);

linkStylesheet(new URL('./livechat.css', import.meta.url).href);
