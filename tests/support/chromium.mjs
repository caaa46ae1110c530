// How every browser test launches Debian's Chromium: headless, as root
// (no sandbox), and without the background traffic a closed network refuses.
export const CHROMIUM = {
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
};
