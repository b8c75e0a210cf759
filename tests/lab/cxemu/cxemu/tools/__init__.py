"""Command implementations of the cxfab lab emulator, one module per emulated tool."""
