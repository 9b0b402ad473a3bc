/**
 * Loads the reader's `Language` record (`format.js`) and draws the list again once it is there:
 * an administrator's separators and date format then show in every cell.
 */
import { useEffect, useState } from 'preact/hooks';
import { loadLanguage } from '../../format.js';

/** @param {string} lang */
export function useLanguageFormats(lang) {
  const [, setLanguageReady] = useState(0);
  useEffect(() => {
    let live = true;
    void loadLanguage(lang).then(() => live && setLanguageReady((n) => n + 1));
    return () => {
      live = false;
    };
  }, [lang]);
}
