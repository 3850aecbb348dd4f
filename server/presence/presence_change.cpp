#include "server/presence/presence_change.h"

namespace rt::presence {

void registerPresenceMetaTypes()
{
    qRegisterMetaType<PresenceRecord>();
    qRegisterMetaType<PresenceChange>();
    qRegisterMetaType<QList<PresenceRecord>>();
}

} // namespace rt::presence
