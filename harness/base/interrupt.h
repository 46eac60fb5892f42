// SIGINT/SIGTERM handling for long runs: the first signal asks the training loop to
// stop after the current step (which is stored, and the run marked interrupted);
// a second one exits at once with the default action.
#pragma once

namespace twinbench {

void install_interrupt_handlers();
bool stop_requested();
int stop_signal();  // the signal that asked to stop, 0 if none

}  // namespace twinbench
