/**
 * The host's look: its light/dark theme, its CSS variables and fonts, and the safe area on mobile. view.css falls
 * back to its own palette (and to `prefers-color-scheme`) for whatever the host leaves out.
 */
import { applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';

/** Applies what the host context says about appearance; fields it leaves out keep their current values. */
export function applyHostContext(context: McpUiHostContext | undefined): void {
  if (!context) return;
  if (context.theme === 'light' || context.theme === 'dark') applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  if (context.styles?.css?.fonts) applyHostFonts(context.styles.css.fonts);
  const insets = context.safeAreaInsets;
  if (insets) {
    const root = document.documentElement.style;
    for (const side of ['top', 'right', 'bottom', 'left'] as const) root.setProperty(`--safe-${side}`, `${insets[side]}px`);
  }
}
