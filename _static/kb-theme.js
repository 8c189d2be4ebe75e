// The reader's colour theme before the page is painted (furo's inline script,
// as a file so that the Content-Security-Policy needs no 'unsafe-inline').
document.body.dataset.theme = localStorage.getItem("theme") || "auto";
